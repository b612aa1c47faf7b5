//go:build !unix

package engine

import "time"

// cpuTime is unknown here; benchmarks then leave out their CPU-time figures.
func cpuTime() time.Duration { return 0 }
