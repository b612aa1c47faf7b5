package sft

import (
	"syscall"
	"time"
)

// processCPUTime returns the CPU time all threads of the process have used.
// The benchmarks divide work by it as well as by wall time: on a shared,
// oversubscribed machine the wall-clock rate drops whenever the scheduler
// parks us, while the rate per CPU-second stays a property of the code.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
