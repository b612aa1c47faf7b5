//go:build race

package kernel

// raceEnabled shrinks the numeric sweeps under the race detector, which
// slows their float64 reference loops twentyfold without checking anything
// more than the smaller sweep does: the concurrency is the same.
const raceEnabled = true
