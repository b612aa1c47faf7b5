//go:build unix

package sample

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, which other load on a
// shared machine disturbs much less than wall-clock time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
