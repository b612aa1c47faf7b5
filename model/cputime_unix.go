//go:build unix

package model

import (
	"syscall"
	"time"
)

// processCPUTime returns the user and system CPU time of the process, all
// threads together, so that benchmarks on a shared machine can report work
// per CPU-second next to wall-clock rates.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
