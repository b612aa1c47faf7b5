//go:build !race

package plugins

// slowdown scales the deadlines of tests whose guests call the host in
// tight loops; 1 without the race detector.
const slowdown = 1
