package engine

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/cuda"
	"github.com/livehat/livehat/model/sample"
	"github.com/livehat/livehat/model/tokenizer"
)

// mtpModel is randomModel with k random MTP heads.
func mtpModel(t *testing.T, preset string, tok *tokenizer.Tokenizer, seed uint64, k int) *model.Model {
	t.Helper()
	m := randomModel(t, preset, tok, seed)
	if err := m.InitMTP(k, seed+1); err != nil {
		t.Fatal(err)
	}
	return m
}

// oracleDrafts makes the engine draft, at each step, the continuation that
// greedy decoding with cfg's penalties would write from the request's
// history (computed with the model's own one-token decode steps), with
// one draft in wrongShare replaced by the next token id: long runs are
// accepted, rejections happen at every depth, and fully accepted drafts
// take the bonus token, all of which the heads of a random model would
// never produce.
func oracleDrafts(t *testing.T, e *Engine, cfg sample.Config, wrongShare int) {
	t.Helper()
	m := e.host
	rng := rand.New(rand.NewPCG(5, 6))
	planned := map[*request][]int{}
	seqs := map[*request]*model.Sequence{}
	V := m.Config.VocabSize
	e.headDraft = func(d int, rs []*request, hidden []float32, tokens []int) ([]float32, []float32, error) {
		logits := make([]float32, len(rs)*V)
		for j, r := range rs {
			if d == 0 {
				s, _ := sample.New(cfg)
				// The request's own sequence keeps the common part of its
				// history from step to step, so each step decodes little.
				seq := seqs[r]
				if seq == nil {
					seq = m.NewSequence()
					seqs[r] = seq
				}
				hist := append([]int(nil), r.history...)
				keep := min(commonPrefix(seq.Tokens(), hist), len(hist)-1)
				if err := seq.Truncate(keep); err != nil {
					return nil, nil, err
				}
				all, err := m.Forward(context.Background(), seq, hist[keep:])
				if err != nil {
					return nil, nil, err
				}
				last := all[len(all)-V:]
				var plan []int
				for range e.opts.Speculative {
					id, err := s.Sample(last, hist, nil)
					if err != nil {
						return nil, nil, err
					}
					if rng.IntN(wrongShare) == 0 {
						id = (id + 1) % V
					}
					plan = append(plan, id)
					hist = append(hist, id)
					if last, err = m.Decode(context.Background(), seq, id); err != nil {
						return nil, nil, err
					}
				}
				planned[r] = plan
			}
			logits[j*V+planned[r][d]] = 30
		}
		return hidden, logits, nil
	}
}

// generateAll runs the requests concurrently and returns their results.
func generateAll(t *testing.T, e *Engine, reqs []Request) []Result {
	t.Helper()
	out := make([]Result, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() {
			res, err := e.Generate(context.Background(), req, nil)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
			out[i] = res
		})
	}
	wg.Wait()
	return out
}

// Greedy replies with speculative decoding are plain decoding's, token for
// token: with the random heads (almost every draft rejected) and with
// oracle drafts (most accepted), batched with chunked prefill and the
// prefix cache, including a constrained tool call and stop strings.
func TestSpeculativeGreedyMatchesPlain(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := mtpModel(t, "tiny-qwen3", tok, 3, 3)
	var reqs []Request
	for _, r := range batchRequests(8) {
		if r.Sampling.Temperature == 0 {
			reqs = append(reqs, r)
		}
	}
	reqs = append(reqs, Request{Messages: question("You are a live-stream host. Use the tools.", "Put a red jacket in my cart."),
		Tools: shopTools(), Constrain: true, Prefix: chat.ToolCallOpen, MaxTokens: 120, Sampling: greedy()})
	opts := Options{MaxBatch: 4, PrefillChunk: 16}
	want := generateAll(t, startEngine(t, m, tok, opts), reqs)

	opts.Speculative = 3
	for _, oracle := range []bool{false, true} {
		e := startEngine(t, m, tok, opts)
		if oracle {
			oracleDrafts(t, e, greedy(), 6)
		}
		got := generateAll(t, e, reqs)
		var spec, free model.SpecStats
		for i := range reqs {
			g, w := got[i], want[i]
			if g.Text != w.Text || g.FinishReason != w.FinishReason || g.Usage.CompletionTokens != w.Usage.CompletionTokens {
				t.Errorf("oracle %v, request %d: speculative %q (%s, %d tokens), plain %q (%s, %d tokens)", oracle, i,
					g.Text, g.FinishReason, g.Usage.CompletionTokens, w.Text, w.FinishReason, w.Usage.CompletionTokens)
			}
			spec = spec.Add(g.Usage.Speculation)
			if !reqs[i].Constrain {
				free = free.Add(g.Usage.Speculation)
			}
		}
		if got := e.Stats().Speculation; got != spec || spec.Drafted == 0 {
			t.Errorf("oracle %v: engine counts %+v, requests' %+v", oracle, got, spec)
		}
		t.Logf("oracle %v: %+v, acceptance %.2f, mean accepted length %.2f; outside the tool call %+v", oracle, spec, spec.AcceptanceRate(), spec.MeanAcceptedLength(), free)
		// The oracle drafts the unconstrained continuation, which the
		// constraint rejects inside the call; elsewhere most drafts stand.
		if oracle && (free.AcceptanceRate() < 0.5 || free.MeanAcceptedLength() < 2) {
			t.Errorf("oracle drafts: acceptance %.2f, mean accepted length %.2f", free.AcceptanceRate(), free.MeanAcceptedLength())
		}
		if g := got[len(got)-1]; len(g.ToolCalls) == 0 || g.ToolCallError != nil {
			t.Errorf("oracle %v: constrained call %q: %v", oracle, g.Text, g.ToolCallError)
		}
	}
}

// Sampled replies with speculation are reproducible for a seed, forced
// tool calls stay valid when the drafts inside them come from an
// unconstrained continuation, and MaxTokens is met exactly.
func TestSpeculativeSampling(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := mtpModel(t, "tiny", tok, 9, 2)
	cfg := sample.Config{Temperature: 1, Seed: 4}
	e := startEngine(t, m, tok, Options{Speculative: 2})
	oracleDrafts(t, e, sample.Config{}, 4)
	req := Request{Messages: question("You are a live-stream host.", "Tell me about the hat."), MaxTokens: 25, Sampling: cfg, IgnoreEOS: true}
	a, err := e.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	e2 := startEngine(t, m, tok, Options{Speculative: 2})
	oracleDrafts(t, e2, sample.Config{}, 4)
	b, _ := e2.Generate(context.Background(), req, nil)
	if a.Text != b.Text || a.Usage.CompletionTokens != 25 || a.FinishReason != FinishLength {
		t.Fatalf("runs differ or miscount: %q (%d, %s) and %q", a.Text, a.Usage.CompletionTokens, a.FinishReason, b.Text)
	}
	if a.Usage.Speculation.Drafted == 0 {
		t.Fatalf("no drafts: %+v", a.Usage.Speculation)
	}
	// Inside a forced call the heads' drafts are checked by the
	// constraint: every call stays valid.
	constrainedCalls(t, startEngine(t, m, tok, Options{Speculative: 2}), 4)
}

// A speculating request is cancelled within a step, and the engine serves
// the next one.
func TestSpeculativeCancel(t *testing.T) {
	tok := trainTokenizer(t, 600)
	m := mtpModel(t, "tiny", tok, 4, 2)
	e := startEngine(t, m, tok, Options{Speculative: 2, MaxBatch: 2})
	oracleDrafts(t, e, sample.Config{}, 3)
	ctx, cancel := context.WithCancel(context.Background())
	deltas := 0
	res, err := e.Generate(ctx, Request{Messages: question("host", "Talk forever."), Sampling: sample.Config{Temperature: 1, Seed: 1}, IgnoreEOS: true},
		func(Delta) error {
			if deltas++; deltas == 3 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) || res.FinishReason != FinishCancelled || res.Usage.CompletionTokens > 200 {
		t.Fatalf("err %v, finish %q, %d tokens", err, res.FinishReason, res.Usage.CompletionTokens)
	}
	if _, err := e.Generate(context.Background(), Request{Messages: question("host", "Hi"), MaxTokens: 5}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestSpeculativeOptions(t *testing.T) {
	tok := trainTokenizer(t, 300)
	m := mtpModel(t, "tiny", tok, 1, 2)
	for _, k := range []int{-1, 3} {
		if _, err := New(m, tok, Options{Speculative: k}); err == nil || !strings.Contains(err.Error(), "2 MTP heads") {
			t.Errorf("Speculative %d: %v", k, err)
		}
	}
}

// LIVEHAT_BACKEND (or Options.Backend) chooses the backend Load computes
// on; cuda without a driver fails with an error naming the fix, and an
// unknown name is refused.
func TestLoadBackendSelection(t *testing.T) {
	tok := trainTokenizer(t, 300)
	m := randomModel(t, "tiny", tok, 2)
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := tok.Save(dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LIVEHAT_BACKEND", "cuda")
	e, err := Load(dir, Options{})
	switch {
	case err == nil:
		// A machine with a GPU: the engine generates through the runner.
		seq := e.dec.NewSequence()
		if _, ok := seq.(*cuda.Sequence); !ok {
			t.Errorf("LIVEHAT_BACKEND=cuda steps %T sequences", seq)
		}
		seq.(io.Closer).Close()
		// The second request restores the first one's prompt from the
		// prefix cache, through the host, into device memory.
		for i := range 2 {
			res, err := e.Generate(context.Background(), Request{Messages: question("host", "Hi"), MaxTokens: 8}, nil)
			if err != nil || res.Usage.CompletionTokens == 0 || i == 1 && res.Usage.CachedTokens == 0 {
				t.Errorf("request %d on the runner: %+v, %v", i, res, err)
			}
		}
		e.Close()
	case os.Getenv("LIVEHAT_REQUIRE_GPU") != "":
		t.Errorf("LIVEHAT_REQUIRE_GPU is set and LIVEHAT_BACKEND=cuda does not load: %v", err)
	case !errors.Is(err, cuda.ErrNoDriver) || !strings.Contains(err.Error(), "LIVEHAT_BACKEND=cpu"):
		t.Errorf("cuda without a driver: %v", err)
	}
	e, err = Load(dir, Options{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Model().Backend().(*model.CPU); !ok {
		t.Errorf("Backend cpu loaded a %T", e.Model().Backend())
	}
	e.Close()
	if _, err := Load(dir, Options{Backend: "tpu"}); err == nil || !strings.Contains(err.Error(), `"tpu"`) {
		t.Errorf("backend tpu: %v", err)
	}
	t.Setenv("LIVEHAT_BACKEND", "metal")
	if _, err := Load(dir, Options{}); err == nil || !strings.Contains(err.Error(), "metal") {
		t.Errorf("LIVEHAT_BACKEND=metal: %v", err)
	}
}
