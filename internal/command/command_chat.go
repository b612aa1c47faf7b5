package command

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/runtime"
)

// Chat is "livehat chat": a conversation in the terminal with a
// checkpoint or a model server, as a viewer of the demo stream meets it —
// the demo harness, the example plugins over the demo catalog, the live
// runtime — with every tool call shown as it ran. One line is one viewer
// message; end with an empty input (EOF) or /quit.
func Chat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modelArg := fs.String("model", examples.ModelName, "bundled, a checkpoint folder, or an OpenAI-compatible server's URL (with --model-name)")
	server := addRemoteFlags(fs)
	harnessFile := fs.String("harness", "", "harness `file` (default: the demo stream's)")
	timeout := fs.Duration("turn-timeout", 60*time.Second, "the longest a turn may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("chat takes no arguments, got %q", fs.Args())
	}
	// The model first: a mistake in its flags is a usage error, told
	// before anything is loaded.
	m, name, closeModel, err := openLiveModel(*modelArg, examples.ModelCacheDir(), server, prometheus.NewRegistry())
	if err != nil {
		return err
	}
	defer closeModel()
	h, dirs, err := demoWithHooks()
	if err != nil {
		return err
	}
	if *harnessFile != "" {
		if h, err = harness.Load(*harnessFile); err != nil {
			return err
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sb, err := runtime.OpenSandbox(ctx, "", quiet)
	if err != nil {
		return err
	}
	defer sb.Close(context.Background())
	for _, dir := range dirs {
		if _, err := sb.LoadGoDir(ctx, dir); err != nil {
			return fmt.Errorf("example plugin %s: %w", dir, err)
		}
	}
	ps, err := sb.Plugins(examples.Catalog, nil)
	if err != nil {
		return err
	}
	c, err := catalog.Parse(examples.Catalog)
	if err != nil {
		return err
	}
	var names, ids []string
	for _, p := range c.Products {
		names, ids = append(names, p.Name), append(ids, p.ID)
	}
	s, err := runtime.NewSession(ctx, runtime.Config{Stream: "chat", Harness: h, Model: m, Plugins: ps, Logger: quiet, TurnTimeout: *timeout,
		Context: func() []harness.ContextItem {
			return []harness.ContextItem{runtime.FeaturedItem(names[0], ids[0]), runtime.ItemsOnSale(names, ids)}
		},
		CatalogItems: func() []string { return ids }, CatalogWords: c.Words,
		CatalogVariants: c.VariantNames})
	if err != nil {
		return err
	}
	defer s.Close()
	events := s.Listen(256)
	fmt.Fprintf(stdout, "livehat chat: %s, harness %s %s (one message a line; /quit ends)\n", name, h.Name, h.ShortVersion())
	in := bufio.NewScanner(stdin)
	for {
		fmt.Fprint(stdout, "> ")
		if !in.Scan() {
			fmt.Fprintln(stdout)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		if line == "/quit" {
			return nil
		}
		if err := s.Submit(runtime.Message{Viewer: "you", Text: line}); err != nil {
			return err
		}
		turn, err := awaitTurn(ctx, events, *timeout+10*time.Second)
		if err != nil {
			return err
		}
		printTurn(stdout, turn)
	}
}

// awaitTurn waits for the next turn's record.
func awaitTurn(ctx context.Context, events <-chan runtime.Event, limit time.Duration) (*runtime.Turn, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case e := <-events:
			if e.Kind == runtime.EventTurn {
				return e.Record, nil
			}
		case <-timer.C:
			return nil, errors.New("chat: no turn within the turn timeout")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// printTurn writes the tool calls a turn made, with their results or
// errors, then the reply and, when it is not a reply of the model's, why.
func printTurn(w io.Writer, t *runtime.Turn) {
	for _, st := range t.Steps {
		switch st.Kind {
		case "tool", "skill":
			result := st.Output
			if st.Error != "" {
				result = "error: " + st.Error
			}
			fmt.Fprintf(w, "  [%s] %s %s → %s\n", st.Kind, st.Name, st.Input, oneLine(result, 200))
		case "model":
			if st.Error != "" {
				fmt.Fprintf(w, "  [model] error: %s\n", st.Error)
			}
		}
	}
	fmt.Fprintln(w, t.Reply)
	if t.Outcome != runtime.OutcomeReplied {
		fmt.Fprintf(w, "  (%s: %s)\n", t.Outcome, t.Reason)
	}
}

// oneLine shortens text to at most n bytes on one line.
func oneLine(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > n {
		return text[:n] + "…"
	}
	return text
}
