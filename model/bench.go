package model

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/livehat/livehat/model/internal/kernel"
)

// BenchModelMain is `livehat bench model`: it measures prefill and decode
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
//	    [--speculative K] [--draft-vocab N]
func BenchModelMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench model", flag.ContinueOnError)
	fs.SetOutput(stderr)
	random := fs.String("random", "", "benchmark random weights of a preset shape ("+strings.Join(PresetNames(), ", ")+")")
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
	dt, err := ParseDType(*dtype)
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
	if *speculative < 0 || *speculative > MaxMTPHeads {
		return fmt.Errorf("bench model: --speculative %d: want 0 to %d", *speculative, MaxMTPHeads)
	}

	cpu := NewCPU(*threads)
	defer cpu.Close()
	opts := Options{DType: dt, Backend: cpu}
	start := time.Now()
	var m *Model
	source := ""
	if *checkpoint != "" {
		m, err = Load(*checkpoint, opts)
		source = *checkpoint
	} else {
		var cfg Config
		if cfg, err = Preset(*random); err == nil {
			m, err = NewRandom(cfg, 1, opts)
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
		source, dt, float64(m.NumParams())/1e6, float64(m.WeightBytes())/(1<<20), cpu.Threads(), runtime.GOMAXPROCS(0),
		kernel.Kernels(), time.Since(start).Seconds())
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
	rng := rand.New(rand.NewPCG(42, 0))
	tokens := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = rng.IntN(m.Config.VocabSize)
		}
		return out
	}

	// best runs f repeat times and returns its shortest wall time and its
	// smallest process CPU time: on a shared machine the fastest run is the
	// one least disturbed, and CPU time is disturbed much less than wall time.
	best := func(f func() error) (wall, cpu time.Duration, err error) {
		for i := range *repeat {
			c0, _ := processCPUTime()
			t0 := time.Now()
			if err := f(); err != nil {
				return 0, 0, err
			}
			el := time.Since(t0)
			c1, _ := processCPUTime()
			if i == 0 || el < wall {
				wall = el
			}
			if i == 0 || c1-c0 < cpu {
				cpu = c1 - c0
			}
		}
		return wall, cpu, nil
	}
	_, haveCPU := processCPUTime()
	rate := func(n int, wall, cpu time.Duration) string {
		s := fmt.Sprintf("%12.1f", float64(n)/wall.Seconds())
		if haveCPU && cpu > 0 {
			s += fmt.Sprintf(" %14.1f", float64(n)/cpu.Seconds())
		}
		return s
	}
	fmt.Fprintf(stdout, "best of %d runs per phase\n", *repeat)
	fmt.Fprintf(stdout, "%-6s %-8s %12s %12s %14s\n", "batch", "phase", "tokens", "tokens/s", "tokens/cpu-s")
	for _, b := range sizes {
		seqs := make([]*Sequence, b)
		prompts := make([][]int, b)
		for i := range seqs {
			seqs[i] = m.NewSequence()
			prompts[i] = tokens(*prompt)
		}
		var first [][]float32
		wall, cpu, err := best(func() error {
			for _, s := range seqs {
				s.Truncate(0)
			}
			var err error
			first, err = m.Step(ctx, seqs, prompts)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, "prefill", b**prompt, rate(b**prompt, wall, cpu))
		next := make([]int, b)
		wall, cpu, err = best(func() error {
			for _, s := range seqs {
				s.Truncate(*prompt)
			}
			last := first
			for range *gen {
				for i := range next {
					next[i] = argmax(last[i])
				}
				var err error
				if last, err = m.Batch(ctx, seqs, next); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, "decode", b**gen, rate(b**gen, wall, cpu))
		if *speculative > 0 {
			if err := benchSpeculative(ctx, m, seqs, prompts, *gen, *speculative, best, rate, stdout); err != nil {
				return err
			}
		}
	}

	if *prefix > 0 {
		shared := tokens(*prefix)
		ask := func() []int { return append(slices.Clone(shared), tokens(*question)...) }
		var seq *Sequence
		uncached, uncachedCPU, err := best(func() error {
			seq = m.NewSequence()
			_, err := m.Prefill(ctx, seq, ask(), nil)
			return err
		})
		if err != nil {
			return err
		}
		// The request just measured warms the cache, as the first viewer
		// question of a room does.
		cache := NewPrefixCache(m, 4<<30)
		cache.Store(seq)
		cached, cachedCPU, err := best(func() error {
			_, err := m.Prefill(ctx, m.NewSequence(), ask(), cache)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "time to first token, %d-token question after a %d-token prefix: uncached %.3fs, cached %.3fs (%.1f× faster)\n",
			*question, *prefix, uncached.Seconds(), cached.Seconds(), uncached.Seconds()/cached.Seconds())
		if haveCPU {
			fmt.Fprintf(stdout, "  CPU time per request: uncached %.3fs, cached %.3fs\n", uncachedCPU.Seconds(), cachedCPU.Seconds())
		}
	}
	return nil
}

// benchSpeculative times greedy decoding of gen tokens per sequence from
// the end of its prompt, plain and with k drafts per step (the same
// GenerateGreedy loop, so the ratio isolates speculation), and reports the
// acceptance.
func benchSpeculative(ctx context.Context, m *Model, seqs []*Sequence, prompts [][]int, gen, k int,
	best func(func() error) (time.Duration, time.Duration, error), rate func(int, time.Duration, time.Duration) string, stdout io.Writer) error {
	b := len(seqs)
	tails := make([][]int, b)
	for i, p := range prompts {
		tails[i] = p[len(p)-1:]
	}
	var plainOut, specOut [][]int
	var st SpecStats
	run := func(draft int, out *[][]int, stats *SpecStats) func() error {
		return func() error {
			for i, s := range seqs {
				if err := s.Truncate(len(prompts[i]) - 1); err != nil {
					return err
				}
			}
			var err error
			*out, *stats, err = m.GenerateGreedy(ctx, seqs, tails, gen, draft)
			return err
		}
	}
	var none SpecStats
	plainWall, plainCPU, err := best(run(0, &plainOut, &none))
	if err != nil {
		return err
	}
	specWall, specCPU, err := best(run(k, &specOut, &st))
	if err != nil {
		return err
	}
	same := "identical to plain greedy"
	for i := range plainOut {
		if !slices.Equal(plainOut[i], specOut[i]) {
			same = "DIFFERENT from plain greedy"
		}
	}
	n := 0
	for _, o := range specOut {
		n += len(o)
	}
	fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, "greedy", n, rate(n, plainWall, plainCPU))
	fmt.Fprintf(stdout, "%-6d %-8s %12d %s\n", b, fmt.Sprintf("spec-%d", k), n, rate(n, specWall, specCPU))
	vocab := "all token ids"
	if dv := m.Config.MTPDraftVocab; dv > 0 {
		vocab = fmt.Sprintf("ids below %d", dv)
	}
	fmt.Fprintf(stdout, "       speculative, %d drafts per step among %s: %.2f× the plain greedy tokens/s; acceptance %.2f, mean accepted length %.2f (%d steps for %d tokens); output %s\n",
		k, vocab, plainWall.Seconds()/specWall.Seconds(), st.AcceptanceRate(), st.MeanAcceptedLength(), st.Steps, n, same)
	return nil
}

// argmax returns the index of the largest logit (greedy decoding).
func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
