package harness

// UsageError is returned by the command functions when the command line
// itself is wrong (unknown subcommand, missing argument), as opposed to a
// harness that fails validation. It is the one usage-error type of every
// livehat command (harness, plugin, train, eval, bench …): livehat exits
// with status 2 on it. It lives here, the lowest package all of them
// import, until the commands have a package of their own.
type UsageError struct{ Msg string }

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }
