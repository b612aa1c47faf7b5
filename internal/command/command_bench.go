package command

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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

	_ "github.com/mattn/go-sqlite3" // bench experiment keeps its experiment in SQLite, as the console does

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/livebench"
)

// Bench runs "livehat bench model|live|experiment".
func Bench(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("missing benchmark (model, live or experiment)")
	}
	switch args[0] {
	case "model":
		rest := args[1:]
		if !hasFlag(rest, "random") && !hasFlag(rest, "checkpoint") {
			// The bundled model unless a shape or checkpoint is named.
			dir, err := examples.WriteModel(examples.ModelCacheDir())
			if err != nil {
				return err
			}
			rest = append([]string{"--checkpoint", dir}, rest...)
		}
		return benchModel(ctx, rest, stdout, stderr)
	case "live":
		return benchLive(ctx, args[1:], stdout, stderr)
	case "experiment":
		return benchExperiment(ctx, args[1:], stdout, stderr)
	}
	return usagef("unknown benchmark %q (want model, live or experiment)", args[0])
}

// hasFlag reports whether args set the flag name, in any of the forms
// the flag package accepts (-name, --name, with =value or without).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// benchModel runs "livehat bench model": it measures prefill and decode
// tokens/s at the requested batch sizes, and the time to first token for a
// question after a long shared prefix with and without the prefix cache.
// With --speculative K it also decodes greedily with K tokens drafted per
// step by the model's MTP heads (random heads are added to a model without
// them, which measures the cost of drafting at no acceptance), against
// plain decoding in the same run, and reports the speed ratio, the
// acceptance rate and the mean accepted length.
//
//	livehat bench model [--random qwen2.5-0.5b [--save DIR] | --checkpoint DIR] [--dtype f32|bf16|q8]
//	    [--batch 1,8] [--prompt 128] [--gen 32] [--prefix 1000] [--question 16] [--threads N] [--repeat 3]
//	    [--speculative K] [--draft-vocab N] [--cpuprofile FILE]
func benchModel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench model", flag.ContinueOnError)
	fs.SetOutput(stderr)
	random := fs.String("random", "", "benchmark random weights of a preset shape ("+strings.Join(model.PresetNames(), ", ")+")")
	checkpoint := fs.String("checkpoint", "", "benchmark a Hugging Face checkpoint directory")
	dtype := fs.String("dtype", "bf16", "weight storage: f32, bf16 or q8")
	batches := fs.String("batch", "1,8", "comma-separated batch sizes")
	prompt := fs.Int("prompt", 128, "prompt tokens per sequence")
	gen := fs.Int("gen", 32, "decode steps")
	prefix := fs.Int("prefix", 1000, "shared prefix tokens for the time-to-first-token test (0 skips it)")
	question := fs.Int("question", 16, "question tokens after the shared prefix")
	threads := fs.Int("threads", 0, "compute threads (0: one per physical core)")
	repeat := fs.Int("repeat", 3, "runs per phase; the fastest is reported")
	speculative := fs.Int("speculative", 0, "also decode with this many tokens drafted per step by the MTP heads (0: off)")
	save := fs.String("save", "", "with --random: also write the random weights as a checkpoint `folder` (safetensors and config.json), so another engine can run the same model (export gguf --tokenizer)")
	draftVocab := fs.Int("draft-vocab", -1, "heads draft among the token ids below N (0: all; -1: the model's mtp_draft_vocab_size)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured phases (not the model's set-up) to this file (read it with go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench model: unexpected arguments %q", fs.Args())
	}
	if (*random == "") == (*checkpoint == "") {
		if *random == "" && *checkpoint == "" {
			*random = "qwen2.5-0.5b"
		} else {
			return errors.New("bench model: give either --random or --checkpoint, not both")
		}
	}
	if *save != "" && *random == "" {
		return errors.New("bench model: --save writes random weights: use it with --random")
	}
	dt, err := model.ParseDType(*dtype)
	if err != nil {
		return err
	}
	var sizes []int
	for _, s := range strings.Split(*batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bench model: bad batch size %q", s)
		}
		sizes = append(sizes, n)
	}
	if *prompt <= 0 || *gen <= 0 || *prefix < 0 || *question <= 0 || *repeat <= 0 {
		return errors.New("bench model: --prompt, --gen, --question and --repeat must be positive, --prefix not negative")
	}
	if *speculative < 0 || *speculative > model.MaxMTPHeads {
		return fmt.Errorf("bench model: --speculative %d: want 0 to %d", *speculative, model.MaxMTPHeads)
	}

	cpu := model.NewCPU(*threads)
	defer cpu.Close()
	opts := model.Options{DType: dt, Backend: cpu}
	start := time.Now()
	var m *model.Model
	source := ""
	if *checkpoint != "" {
		m, err = model.Load(*checkpoint, opts)
		source = *checkpoint
	} else {
		var cfg model.Config
		if cfg, err = model.Preset(*random); err == nil {
			m, err = model.NewRandom(cfg, 1, opts)
		}
		source = "random " + *random
	}
	if err != nil {
		return err
	}
	if *save != "" {
		if err := m.Save(*save); err != nil {
			return fmt.Errorf("bench model: --save: %w", err)
		}
		fmt.Fprintf(stdout, "saved the random %s weights to %s\n", *random, *save)
	}
	// The kernel set is part of the result: side-by-side runs must say
	// whether AVX2 or AVX-512 ran (LIVEHAT_KERNELS forces one).
	fmt.Fprintf(stdout, "model: %s, %s weights, %.1f M parameters, %.0f MiB; %d threads, GOMAXPROCS %d, %s kernels; built in %.1fs\n",
		source, dt, float64(m.NumParams())/1e6, float64(m.WeightBytes())/(1<<20), cpu.Threads(), goruntime.GOMAXPROCS(0),
		cpu.Kernels(), time.Since(start).Seconds())
	if *speculative > len(m.MTP) {
		fmt.Fprintf(stdout, "the model has %d MTP heads: %d random ones replace them (drafts will almost never be accepted)\n", len(m.MTP), *speculative)
		if err := m.InitMTP(*speculative, 1); err != nil {
			return err
		}
	}
	if *draftVocab >= 0 {
		if *draftVocab > m.Config.VocabSize {
			return fmt.Errorf("bench model: --draft-vocab %d exceeds the vocabulary of %d", *draftVocab, m.Config.VocabSize)
		}
		m.Config.MTPDraftVocab = *draftVocab
	}
	need := max(*prompt+*gen, *prefix+*question)
	if need > m.MaxContext() {
		return fmt.Errorf("bench model: %d tokens exceed the model's context of %d", need, m.MaxContext())
	}

	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	// The random prompts are drawn from one seed, so runs compare.
	const seed = 42
	fmt.Fprintf(stdout, "best of %d runs per phase\n", *repeat)
	fmt.Fprintf(stdout, "%-6s %-8s %12s %12s %14s\n", "batch", "phase", "tokens", "tokens/s", "tokens/cpu-s")
	for _, b := range sizes {
		res, err := model.BenchThroughput(ctx, m, model.ThroughputOptions{Batch: b, Prompt: *prompt, Gen: *gen,
			Speculative: *speculative, Repeat: *repeat, Seed: seed})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, "prefill", b**prompt, rate(b**prompt, res.Prefill))
		fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, "decode", b**gen, rate(b**gen, res.Decode))
		if s := res.Speculative; s != nil {
			same := "identical to plain greedy"
			if !s.Identical {
				same = "DIFFERENT from plain greedy"
			}
			fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, "greedy", s.Tokens, rate(s.Tokens, s.Plain))
			fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, fmt.Sprintf("spec-%d", *speculative), s.Tokens, rate(s.Tokens, s.Drafted))
			vocab := "all token ids"
			if dv := m.Config.MTPDraftVocab; dv > 0 {
				vocab = fmt.Sprintf("ids below %d", dv)
			}
			fmt.Fprintf(stdout, "       speculative, %d drafts per step among %s: %.2f× the plain greedy tokens/s; acceptance %.2f, mean accepted length %.2f (%d steps for %d tokens); output %s\n",
				*speculative, vocab, s.Plain.Wall.Seconds()/s.Drafted.Wall.Seconds(), s.Stats.AcceptanceRate(), s.Stats.MeanAcceptedLength(), s.Stats.Steps, s.Tokens, same)
		}
	}

	if *prefix > 0 {
		res, err := model.BenchPrefixCache(ctx, m, model.PrefixCacheOptions{Prefix: *prefix, Question: *question, Repeat: *repeat, Seed: seed})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "time to first token, %d-token question after a %d-token prefix: uncached %.3fs, cached %.3fs (%.1f× faster)\n",
			*question, *prefix, res.Uncached.Wall.Seconds(), res.Cached.Wall.Seconds(), res.Uncached.Wall.Seconds()/res.Cached.Wall.Seconds())
		if res.Uncached.CPU > 0 {
			fmt.Fprintf(stdout, "  CPU time per request: uncached %.3fs, cached %.3fs\n", res.Uncached.CPU.Seconds(), res.Cached.CPU.Seconds())
		}
	}
	return nil
}

// rate formats n tokens over a phase's timing as tokens/s, and tokens per
// CPU-second where the CPU time was measured.
func rate(n int, t model.Timing) string {
	s := fmt.Sprintf("%12.1f", float64(n)/t.Wall.Seconds())
	if t.CPU > 0 {
		s += fmt.Sprintf(" %14.1f", float64(n)/t.CPU.Seconds())
	}
	return s
}

// benchLive runs "livehat bench live" on the demo harness with the
// example hook plugins.
func benchLive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	base, pluginDirs, err := demoWithHooks()
	if err != nil {
		return err
	}
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
	mergeWindow := fs.Duration("merge-window", 500*time.Millisecond, "how long a room collects messages before a turn starts (0: none, as a console live session)")
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
	if *mergeWindow < 0 {
		return usagef("--merge-window %s: want 0 (none) or more", *mergeWindow)
	}
	var arms []livebench.Arm
	for _, b := range batches {
		for _, p := range promotes {
			arms = append(arms, livebench.Arm{Batch: b, PromoteAfter: p})
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, closeModel, err := openBenchModel(*modelArg, *remoteModel, engine.Options{MaxBatch: *maxBatch, PrefillChunk: *prefillChunk, Threads: *threads})
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
	fmt.Fprintf(stderr, "bench live: %d rooms, %.2f msg/s each, %s, model %s, %d turn(s) at once per room, merge window %s, arms (batch, promote-after) %v\n",
		*streams, *rate, *duration, *modelArg, *concurrency, *mergeWindow, arms)
	window := *mergeWindow
	if window == 0 {
		window = -1 // livebench's none
	}
	reps, err := livebench.Run(ctx, livebench.Config{Harness: base, Model: m, Sandbox: sb, Streams: *streams, Rate: *rate, Duration: *duration,
		MaxTokens: *maxTokens, Concurrency: *concurrency, MergeWindow: window, Arms: arms, Seed: 1, Logger: log})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reps)
	}
	for _, rep := range reps {
		printLiveReport(stdout, rep)
	}
	return nil
}

// printLiveReport prints one arm's report of bench live as text.
func printLiveReport(stdout io.Writer, rep livebench.Report) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
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
	for _, name := range slices.Sorted(maps.Keys(rep.Hooks)) {
		h := rep.Hooks[name]
		fmt.Fprintf(stdout, "hook %-16s added per turn P50 %.2f ms  P95 %.2f ms over %d turns; sent back %d (%.1f%%), rewrote %d (%.1f%%)\n",
			name, float64(h.P50)/1e6, float64(h.P95)/1e6, h.Turns, h.Retried, 100*float64(h.Retried)/float64(h.Turns),
			h.Rewrote, 100*float64(h.Rewrote)/float64(h.Turns))
	}
}

// parseBatches reads --batch: one size or a comma-separated list.
func parseBatches(arg string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(arg, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, usagef("--batch %q: want sizes of at least 1, such as 1 or 1,4", arg)
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
			return nil, usagef("--promote-after %q: want durations such as 2s, or -1s for strict priority, such as 2s,-1s", arg)
		}
		out = append(out, d)
	}
	return out, nil
}

// openBenchModel opens the model bench live talks to from --model: the
// bundled model, random:tiny or random:small, a checkpoint folder or an
// OpenAI-compatible server's URL (with --remote-model). The function it
// returns releases the model.
func openBenchModel(arg, remoteName string, opts engine.Options) (runtime.Model, func(), error) {
	switch {
	case strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://"):
		if remoteName == "" {
			return nil, nil, usagef("--remote-model: name the model the server should answer with")
		}
		c, err := remote.New(remote.Config{BaseURL: arg, Model: remoteName})
		if err != nil {
			return nil, nil, err
		}
		return runtime.RemoteModel{Client: c}, func() {}, nil
	case strings.HasPrefix(arg, "random:"):
		size := strings.TrimPrefix(arg, "random:")
		if size != "tiny" && size != "small" {
			return nil, nil, usagef("random:%s: want random:tiny or random:small", size)
		}
		threads := opts.Threads
		if threads <= 0 {
			threads = engine.DefaultThreads()
		}
		cpu := model.NewCPU(threads)
		e, err := livebench.RandomEngine(size, cpu, opts)
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
		return openBenchModel(dir, remoteName, opts)
	default:
		if st, err := os.Stat(arg); err != nil || !st.IsDir() {
			return nil, nil, usagef("--model %q: want bundled, random:tiny, random:small, a checkpoint folder or a URL", arg)
		}
		e, err := engine.Load(filepath.Clean(arg), opts)
		if err != nil {
			return nil, nil, err
		}
		return runtime.LocalModel{Engine: e, Constrain: true}, func() { e.Close() }, nil
	}
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

// benchExperimentUsage is the command line of bench experiment.
const benchExperimentUsage = "livehat bench experiment [--viewers N] [--seed N] [--arms no-coupon,demo] [--rooms N] [--analysis fixed_horizon|sequential] [--planned N] [--parallel N] [--plugins DIR] [--plugin-cache DIR] [--db FILE] [--json]"

// benchPresets are the harnesses an arm of bench experiment can run.
func benchPresets(demo *harness.Harness) (map[string]func() (*harness.Harness, error), []string) {
	return map[string]func() (*harness.Harness, error){
		"demo":      func() (*harness.Harness, error) { return demo, nil },
		"no-coupon": func() (*harness.Harness, error) { return experiment.WithoutCoupons(demo) },
	}, []string{"demo", "no-coupon"}
}

// benchExperiment runs "livehat bench experiment": a simulated two-arm (or
// more) experiment in the live room, every viewer's question answered
// through the real runtime with the example plugins and the live room's
// expert policy, stored in SQLite and reported as an uplift table with
// intervals, the sample-ratio check and the verdict. The first arm is the
// control. Run it from the repository root (the example plugins are built
// from examples/plugins), or pass --plugins.
func benchExperiment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench experiment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage:", benchExperimentUsage)
		fs.PrintDefaults()
	}
	viewers := fs.Int("viewers", 4000, "simulated viewers; each asks one shopping question")
	seed := fs.Uint64("seed", 1, "seed of rooms, viewers and their choices")
	armsArg := fs.String("arms", "no-coupon,demo", "comma-separated harness presets, control first: demo, no-coupon (repeat one for an A/A test)")
	rooms := fs.Int("rooms", 8, "simulated live rooms (streams)")
	analysis := fs.String("analysis", string(experiment.AnalysisFixedHorizon), "peeking guard: fixed_horizon or sequential")
	planned := fs.Int("planned", 0, "planned units per arm (0: 90 % of an even split of --viewers)")
	parallel := fs.Int("parallel", 2, "turns run at once")
	pluginDir := fs.String("plugins", filepath.Join("examples", "plugins"), "folder of the example plugins")
	cacheDir := fs.String("plugin-cache", "", "cache of built plugins (default: the plugins package's cache folder)")
	dbPath := fs.String("db", "", "keep the experiment in this SQLite file (default: a temporary one)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q; usage: %s", fs.Arg(0), benchExperimentUsage)
	}
	if *viewers < 4 || *rooms < 1 || *parallel < 1 || *planned < 0 {
		return usagef("--viewers must be at least 4, --rooms and --parallel at least 1, --planned not negative")
	}
	if a := experiment.Analysis(*analysis); a != experiment.AnalysisFixedHorizon && a != experiment.AnalysisSequential {
		return usagef("--analysis %q: want fixed_horizon or sequential", *analysis)
	}
	demo, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		return fmt.Errorf("bench experiment: demo harness: %w", err)
	}
	presets, names := benchPresets(demo)
	var arms []experiment.SimArm
	list := strings.Split(*armsArg, ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	for i, p := range list {
		build, ok := presets[p]
		if !ok {
			return usagef("--arms: unknown preset %q (want %s)", p, strings.Join(names, ", "))
		}
		h, err := build()
		if err != nil {
			return err
		}
		name := p
		if count := len(slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x != p })); count > 1 {
			name = fmt.Sprintf("%s-%c", p, 'a'+i) // an A/A test: the same harness twice
		}
		arms = append(arms, experiment.SimArm{Name: name, Harness: h})
	}
	if len(arms) < 2 {
		return usagef("--arms: name at least two presets, the control first")
	}
	if *planned == 0 {
		*planned = *viewers * 9 / 10 / len(arms)
	}

	quiet := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sb, err := runtime.OpenSandbox(ctx, *cacheDir, quiet)
	if err != nil {
		return err
	}
	defer sb.Close(context.Background())
	sb.SetTimeoutFloor(5 * time.Second)
	for _, p := range examples.DemoPlugins() {
		if _, err := sb.LoadGoDir(ctx, filepath.Join(*pluginDir, p)); err != nil {
			return fmt.Errorf("bench experiment: the example plugins are built from %s (run from the repository root or pass --plugins): %w", *pluginDir, err)
		}
	}
	path := *dbPath
	if path == "" {
		dir, err := os.MkdirTemp("", "livehat-bench-experiment-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "experiment.db")
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on")
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range experiment.Migrations() {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("bench experiment: %s: %w (use a new --db file)", path, err)
		}
	}
	t0 := time.Now()
	res, err := experiment.Simulate(ctx, experiment.SimConfig{Store: experiment.NewStore(db, experiment.SimStart), Sandbox: sb, Arms: arms, Viewers: *viewers,
		Rooms: *rooms, Seed: *seed, Analysis: experiment.Analysis(*analysis), PlannedUnitsPerArm: *planned, Parallel: *parallel, Logger: quiet})
	if err != nil {
		return fmt.Errorf("bench experiment: %w", err)
	}
	took := time.Since(t0)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Scores  map[string]float64     `json:"answer_scores"`
			Events  experiment.BatchResult `json:"ingestion"`
			Report  *experiment.Report     `json:"report"`
			Seconds float64                `json:"seconds"`
		}{res.Score, experiment.BatchResult{Accepted: res.Events.Accepted, Duplicates: res.Events.Duplicates, Rejected: res.Events.Rejected}, res.Report, took.Seconds()})
	}
	return experiment.WriteReport(stdout, res.Report, res.Score)
}
