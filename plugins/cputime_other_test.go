//go:build !unix

package plugins

import "time"

// cpuTime is not measured outside unix; benchmarks then report 0.
func cpuTime() time.Duration { return 0 }
