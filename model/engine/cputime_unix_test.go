//go:build unix

package engine

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system. On
// the shared, oversubscribed benchmark machine work per CPU-second is a
// steadier figure than work per wall-clock second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
