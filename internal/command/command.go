// Package command holds the livehat subcommands. Each command_<name>.go
// parses one command's flags, calls the libraries and prints what they
// return; the libraries know no flags, as bbolt keeps cmd/bbolt/command
// apart from bbolt. The root main.go holds the table of commands.
package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Func is the shape of every command: the arguments after the command's
// name, standard input, output and the stream for errors and usage.
type Func func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// UsageError is returned when the command line itself is wrong (unknown
// subcommand, a missing or malformed flag), as opposed to work that
// failed; livehat exits with status 2 on it.
type UsageError struct{ Msg string }

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }

// usagef returns a *UsageError with a formatted message.
func usagef(format string, a ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, a...)}
}

// IsUsage reports whether err is a command-line mistake.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// newFlags returns the flag set of "livehat NAME": parse errors come back
// as errors (ContinueOnError) and -h prints synopsis and the flags.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: livehat %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags that may come before or after the positional
// arguments ("test FILE --call x" and "test --call x FILE" both work) and
// returns the positional ones. A malformed flag is a *UsageError; -h is
// flag.ErrHelp, which livehat treats as success.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
