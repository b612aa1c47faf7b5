package kernel

import "syscall"

// osYield gives the CPU to another runnable thread, if any (sched_yield):
// a polling pool thread then does not hold up one that the OS scheduled on
// the same CPU. Go's runtime.Gosched yields to goroutines only.
func osYield() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
