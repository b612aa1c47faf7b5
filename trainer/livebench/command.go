package livebench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// Main runs "livehat bench live" with the given base harness and hook
// plugin folders.
func Main(ctx context.Context, base *harness.Harness, pluginDirs []string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench live", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modelArg := fs.String("model", examples.ModelName, "bundled (the repository's compact model), random:tiny, random:small (a 40M-parameter random model), a checkpoint folder, or a server URL")
	remoteModel := fs.String("remote-model", "", "model name for a server URL")
	streams := fs.Int("streams", 4, "live rooms at once")
	rate := fs.Float64("rate", 0.5, "viewer messages per second per room (bursts come on top)")
	duration := fs.Duration("duration", 20*time.Second, "how long viewers send messages")
	maxTokens := fs.Int("max-tokens", 32, "tokens per generation (random models never stop on their own)")
	maxBatch := fs.Int("max-batch", 0, "requests the engine advances together in one step (0: the engine's default)")
	prefillChunk := fs.Int("prefill-chunk", 0, "prompt tokens the engine reads in one step over all joining requests (0: the engine's default)")
	threads := fs.Int("threads", 0, "the CPU backend's compute threads (0: one per physical core but one, which the runtime keeps)")
	concurrency := fs.Int("concurrency", 1, "turns each room generates at once (the next reply is generated while one is spoken)")
	batchArg := fs.String("batch", "1", "questions of one class a turn answers together (1: one at a time); a list such as 1,4 splits the rooms across the sizes, each arm playing the same viewers")
	promoteArg := fs.String("promote-after", "2s", "wait after which a queued question rises one priority class (-1s: strict priority); a list such as 2s,-1s adds arms, crossed with --batch")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run (set-up, traffic and drain) to this file (read it with go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	batches, err := parseBatches(*batchArg)
	if err != nil {
		return err
	}
	promotes, err := parsePromotes(*promoteArg)
	if err != nil {
		return err
	}
	var arms []Arm
	for _, b := range batches {
		for _, p := range promotes {
			arms = append(arms, Arm{Batch: b, PromoteAfter: p})
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, closeModel, err := openModel(*modelArg, *remoteModel, engine.Options{MaxBatch: *maxBatch, PrefillChunk: *prefillChunk, Threads: *threads})
	if err != nil {
		return err
	}
	defer closeModel()
	sb, err := runtime.OpenSandbox(ctx, "", log)
	if err != nil {
		return err
	}
	defer sb.Close(context.Background())
	for _, dir := range pluginDirs {
		if _, err := sb.LoadGoDir(ctx, dir); err != nil {
			return err
		}
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	fmt.Fprintf(stderr, "bench live: %d rooms, %.2f msg/s each, %s, model %s, %d turn(s) at once per room, arms (batch, promote-after) %v\n", *streams, *rate, *duration, *modelArg, *concurrency, arms)
	reps, err := Run(ctx, Config{Harness: base, Model: m, Sandbox: sb, Streams: *streams, Rate: *rate, Duration: *duration,
		MaxTokens: *maxTokens, Concurrency: *concurrency, Arms: arms, Seed: 1, Logger: log})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reps)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	for _, rep := range reps {
		ageing := "strict priority"
		if rep.PromoteAfter >= 0 {
			ageing = "a question rises one class every " + rep.PromoteAfter.String()
		}
		fmt.Fprintf(stdout, "— %d rooms, up to %d question(s) a turn, %s\n", rep.Streams, rep.Batch, ageing)
		fmt.Fprintf(stdout, "messages: %d sent: %d answered, %d safe lines, %d denied (spam), %d shed, %d stale, %d closed; %d merged as near-duplicates, %d batched, in %d turns\n",
			rep.Sent, rep.Answered, rep.SafeLines, rep.Denied, rep.Shed, rep.Stale, rep.Closed, rep.Merged, rep.Batched, rep.Turns)
		fmt.Fprintf(stdout, "machine busy: %.0f%% while viewers send, %.0f%% with the drain (process CPU over %d cores × %s wall); engine stepping %.0f%% of the sending time; rooms busy %.0f%% of the wall in turns\n",
			100*rep.TrafficBusy, 100*rep.Busy, goruntime.NumCPU(), rep.Wall.Round(time.Second), 100*rep.EngineBusy, 100*rep.RoomBusy)
		fmt.Fprintf(stdout, "per question (a message with its near-duplicates, from its arrival):\n")
		fmt.Fprintf(stdout, "first chunk  P50 %s  P95 %s  P99 %s\n", ms(rep.FirstChunk.P50), ms(rep.FirstChunk.P95), ms(rep.FirstChunk.P99))
		fmt.Fprintf(stdout, "turn total   P50 %s  P95 %s  P99 %s  (P95/P50 %.2f)\n", ms(rep.Total.P50), ms(rep.Total.P95), ms(rep.Total.P99),
			float64(rep.Total.P95)/float64(max(rep.Total.P50, 1)))
		for c := runtime.PriorityProduct; c <= runtime.PriorityAmbient; c++ {
			if cl, ok := rep.ByClass[c.String()]; ok {
				fmt.Fprintf(stdout, "  %-10s %3d questions, total P50 %s  P95 %s\n", c, cl.Questions, ms(cl.Total.P50), ms(cl.Total.P95))
			}
		}
		fmt.Fprintf(stdout, "model        P50 %s  P95 %s\n", ms(rep.Model.P50), ms(rep.Model.P95))
		if rep.Turns > 0 && rep.PromptTokens > 0 {
			perTurn := func(n int) float64 { return float64(n) / float64(rep.Turns) }
			fmt.Fprintf(stdout, "per turn: %.1f generations reading %.0f prompt tokens (%.0f%% from the prefix cache) and writing %.0f\n",
				perTurn(rep.Generations), perTurn(rep.PromptTokens), 100*float64(rep.CachedTokens)/float64(rep.PromptTokens), perTurn(rep.CompletionTokens))
		}
		fmt.Fprintf(stdout, "outside the model: %.1f%% of turn time (median %s per turn, %.1f%% of the P50 turn)\n",
			100*rep.OutsideModel, ms(rep.OutsideModelP50), 100*float64(rep.OutsideModelP50)/float64(max(rep.Total.P50, 1)))
		names := slices.Sorted(maps.Keys(rep.Hooks))
		for _, name := range names {
			h := rep.Hooks[name]
			fmt.Fprintf(stdout, "hook %-16s added per turn P50 %.2f ms  P95 %.2f ms over %d turns; sent back %d (%.1f%%), rewrote %d (%.1f%%)\n",
				name, float64(h.P50)/1e6, float64(h.P95)/1e6, h.Turns, h.Retried, 100*float64(h.Retried)/float64(h.Turns),
				h.Rewrote, 100*float64(h.Rewrote)/float64(h.Turns))
		}
	}
	return nil
}

// parseBatches reads --batch: one size or a comma-separated list.
func parseBatches(arg string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(arg, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, &harness.UsageError{Msg: fmt.Sprintf("--batch %q: want sizes of at least 1, such as 1 or 1,4", arg)}
		}
		out = append(out, n)
	}
	return out, nil
}

// parsePromotes reads --promote-after: one duration or a comma-separated
// list; negative is strict priority.
func parsePromotes(arg string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(arg, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d == 0 {
			return nil, &harness.UsageError{Msg: fmt.Sprintf("--promote-after %q: want durations such as 2s, or -1s for strict priority, such as 2s,-1s", arg)}
		}
		out = append(out, d)
	}
	return out, nil
}

// openModel builds the model a bench talks to.
func openModel(arg, remoteName string, opts engine.Options) (runtime.Model, func(), error) {
	switch {
	case strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://"):
		if remoteName == "" {
			return nil, nil, &harness.UsageError{Msg: "--remote-model: name the model the server should answer with"}
		}
		c, err := remote.New(remote.Config{BaseURL: arg, Model: remoteName})
		if err != nil {
			return nil, nil, err
		}
		return runtime.RemoteModel{Client: c}, func() {}, nil
	case strings.HasPrefix(arg, "random:"):
		threads := opts.Threads
		if threads <= 0 {
			threads = engine.DefaultThreads()
		}
		cpu := model.NewCPU(threads)
		e, err := randomEngine(strings.TrimPrefix(arg, "random:"), cpu, opts)
		if err != nil {
			cpu.Close()
			return nil, nil, err
		}
		return runtime.LocalModel{Engine: e, Constrain: true}, func() {
			e.Close()
			cpu.Close()
		}, nil
	case arg == examples.ModelName:
		dir, err := examples.WriteModel(examples.ModelCacheDir())
		if err != nil {
			return nil, nil, err
		}
		return openModel(dir, remoteName, opts)
	default:
		if st, err := os.Stat(arg); err != nil || !st.IsDir() {
			return nil, nil, &harness.UsageError{Msg: fmt.Sprintf("--model %q: want bundled, random:tiny, random:small, a checkpoint folder or a URL", arg)}
		}
		e, err := engine.Load(filepath.Clean(arg), opts)
		if err != nil {
			return nil, nil, err
		}
		return runtime.LocalModel{Engine: e, Constrain: true}, func() { e.Close() }, nil
	}
}

// randomEngine builds a random-weight model over a vocabulary trained on
// live-room text: its replies are noise, but its prompts, prefix cache and
// compute are those of a real compact model of that size.
func randomEngine(size string, cpu *model.CPU, opts engine.Options) (*engine.Engine, error) {
	var corpus []string
	for seed := uint64(1); seed <= 20; seed++ {
		room := liveroom.NewRoom(seed, liveroom.RoomConfig{})
		for _, q := range room.Questions(seed, 50, liveroom.QuestionConfig{}) {
			corpus = append(corpus, q.Text)
		}
		if data, err := room.CatalogJSON(); err == nil {
			corpus = append(corpus, string(data))
		}
	}
	tok, err := tokenizer.Train(context.Background(), slices.Values(corpus), tokenizer.TrainConfig{VocabSize: 2000,
		SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"}})
	if err != nil {
		return nil, err
	}
	cfg, err := model.Preset("tiny")
	if err != nil {
		return nil, err
	}
	if size == "small" {
		cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers, cfg.NumHeads, cfg.NumKVHeads, cfg.HeadDim = 512, 1408, 8, 8, 2, 64
	} else if size != "tiny" {
		return nil, &harness.UsageError{Msg: fmt.Sprintf("random:%s: want random:tiny or random:small", size)}
	}
	cfg.VocabSize = tok.VocabSize()
	cfg.MaxPositionEmbeddings = 32768
	if id, ok := tok.TokenID("<|im_end|>"); ok {
		cfg.EOSTokenID = id
	}
	m, err := model.NewRandom(cfg, 1, model.Options{DType: model.F32, Backend: cpu})
	if err != nil {
		return nil, err
	}
	return engine.New(m, tok, opts)
}

// startCPUProfile starts writing a CPU profile to path; the function it
// returns stops it and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
