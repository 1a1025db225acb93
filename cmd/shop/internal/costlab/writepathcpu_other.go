//go:build !unix

package costlab

import "time"

// cpuTime is 0 where getrusage is not: the CPU columns read 0.
func cpuTime() time.Duration { return 0 }

// fileSystem is not known where statfs is not.
func fileSystem(string) string { return "unknown" }
