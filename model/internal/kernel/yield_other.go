//go:build !linux

package kernel

import "runtime"

// osYield lets other goroutines run; without sched_yield, that is all a
// polling pool thread can give up.
func osYield() { runtime.Gosched() }
