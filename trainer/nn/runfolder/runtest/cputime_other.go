//go:build !unix

package runtest

import "time"

// CPUTime reports that this platform does not give the process's CPU
// time.
func CPUTime() (time.Duration, bool) { return 0, false }
