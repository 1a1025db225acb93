//go:build unix

package httpserver

import "syscall"

// FDLimit is the process's soft limit on open files (RLIMIT_NOFILE), 0 if
// it cannot be read. Nothing here raises it: Go raises the soft limit to
// the hard one for every program that imports os, at start (package
// syscall, since Go 1.19), so this is in effect the hard limit the
// process was started with.
func FDLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return uint64(lim.Cur)
}
