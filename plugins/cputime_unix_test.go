//go:build unix

package plugins

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: on a
// shared machine it is steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
