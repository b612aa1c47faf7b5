//go:build unix

package runtest

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time all threads of the process have used
// (false where the platform does not say). Benchmarks divide work by it as
// well as by wall time: on a shared, oversubscribed machine the wall-clock
// rate drops whenever the scheduler parks the process, while the rate per
// CPU-second stays a property of the code.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
