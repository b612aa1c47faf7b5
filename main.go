// Command livehat runs the LiveHAT platform: the console server, the harness
// and plugin tools, training, evaluation and benchmarks.
//
// Usage:
//
//	livehat [command] [flags]
//
// With no command, livehat runs "serve" on the embedded defaults.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/livehat/livehat/internal/command"
	"github.com/livehat/livehat/plugins"
)

// subcommand is one livehat subcommand. The implementations live in
// internal/command, one file per command; main only wires them.
type subcommand struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() map[string]subcommand {
	return map[string]subcommand{
		"serve":     {"start the console server (default)", command.Serve},
		"chat":      {"talk to a checkpoint or a model server (--model DIR|URL) in the terminal as a viewer of the demo stream, tool calls shown", command.Chat},
		"harness":   {"validate, render, diff and augment harness files", command.Harness},
		"plugin":    {"build, inspect, test, pack and install WebAssembly plugins", command.Plugin},
		"tokenize":  {"encode JSONL text to token ids, or decode ids (--decode)", command.Tokenize},
		"tokenizer": {"train a byte-level BPE vocabulary from a corpus", command.Tokenizer},
		"bench":     {"measure the model core (bench model), the live runtime under load (bench live), or an A/B experiment in the simulated live room (bench experiment)", command.Bench},
		"eval":      {"run the evaluation suites (lsqa, hvqa, robust, strategy, ifeval) through the runtime", command.Eval},
		"train":     {"train with HAT (--stage sft|opd|rl|mtp, --augment=false for fixed-harness SFT, or --recipe bundled for the whole pipeline)", command.Train},
		"export":    {"export training data (--format trl|verl) or a checkpoint as GGUF (export gguf)", command.Export},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the process exit code:
// 0 on success, 2 on a usage error, 1 on any other failure.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmds := commands()
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout, cmds)
		return 0
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "livehat: unknown command %q\n\n", name)
		usage(stderr, cmds)
		return 2
	}
	err := cmd.run(ctx, args, stdin, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case command.IsUsage(err):
		fmt.Fprintf(stderr, "livehat %s: %v\n", name, err)
		return 2
	default:
		fmt.Fprintf(stderr, "livehat %s: %v\n", name, err)
		// A plugin that exited with its own status (WASI proc_exit) hands
		// it on, as Extism's CLI does, so scripts can tell failures apart.
		var ce *plugins.CallError
		if errors.As(err, &ce) && ce.ExitCode != 0 {
			return int(ce.ExitCode)
		}
		return 1
	}
}

func usage(w io.Writer, cmds map[string]subcommand) {
	fmt.Fprintln(w, "livehat — live-stream avatar agents that evolve with their harness")
	fmt.Fprintln(w, "\nUsage: livehat [command] [flags]   (no command: serve)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'livehat COMMAND -h' for a command's flags.")
}
