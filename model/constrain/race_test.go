//go:build race

package constrain

// raceEnabled reports whether the race detector is on; tests with no
// concurrency skip their heaviest parts under it.
const raceEnabled = true
