//go:build unix

package costlab

import (
	"fmt"
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system, as the
// kernel counts it (getrusage): the write path's CPU per operation is
// its difference around the operation.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fileSystem names the file system dir is on, by its magic number.
func fileSystem(dir string) string {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return "unknown"
	}
	switch uint64(st.Type) {
	case 0xEF53:
		return "ext2/3/4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x01021994:
		return "tmpfs (fsync does nothing: the limit is the CPU's)"
	case 0x794C7630:
		return "overlayfs"
	}
	return fmt.Sprintf("file system 0x%x", uint64(st.Type))
}
