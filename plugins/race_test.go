//go:build race

package plugins

// slowdown scales the deadlines of tests whose guests call the host in
// tight loops: the race detector slows host functions ~10x.
const slowdown = 10
