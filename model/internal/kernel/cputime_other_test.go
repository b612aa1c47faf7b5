//go:build !linux

package kernel

import "time"

// processCPUTime is unavailable here; benchmarks report wall time only.
func processCPUTime() (time.Duration, bool) { return 0, false }
