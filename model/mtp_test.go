package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func tinyMTP(t *testing.T, heads int) Config {
	t.Helper()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MTPHeads = heads
	return cfg
}

// Heads are saved as mtp.{i}.… tensors with num_nextn_predict_layers in
// config.json and load back bit for bit in every storage type.
func TestMTPSaveLoadBitIdentical(t *testing.T) {
	cpu := NewCPU(2)
	defer cpu.Close()
	for _, dt := range []DType{F32, BF16, Q8} {
		m, err := NewRandom(tinyMTP(t, 2), 5, Options{DType: dt, Backend: cpu})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
		if !strings.Contains(string(cfg), `"num_nextn_predict_layers": 2`) {
			t.Fatalf("config.json lacks the head count:\n%s", cfg)
		}
		got, err := Load(dir, Options{Backend: cpu})
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		weightsEqual(t, m, got)
		if len(got.MTP) != 2 || got.MTP[1].EHProj.Cols() != 2*m.Config.HiddenSize {
			t.Fatalf("%s: loaded %d heads", dt, len(got.MTP))
		}
	}
}

// A checkpoint without heads loads as before (no heads, no config key),
// and adding heads leaves the trunk's random weights unchanged.
func TestMTPAbsentAndInit(t *testing.T) {
	cpu := NewCPU(1)
	defer cpu.Close()
	plain, err := NewRandom(tinyMTP(t, 0), 3, Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := plain.Save(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "config.json")); strings.Contains(string(b), "nextn") {
		t.Fatalf("config.json of a model without heads mentions them:\n%s", b)
	}
	got, err := Load(dir, Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	if got.Config.MTPHeads != 0 || len(got.MTP) != 0 {
		t.Fatalf("heads appeared: %d", len(got.MTP))
	}
	withHeads, err := NewRandom(tinyMTP(t, 3), 3, Options{Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.Layers[1].Up.f32, withHeads.Layers[1].Up.f32) || !slices.Equal(plain.Norm, withHeads.Norm) {
		t.Fatal("the heads changed the trunk's random weights")
	}
	if err := got.InitMTP(2, 9); err != nil {
		t.Fatal(err)
	}
	if got.Config.MTPHeads != 2 || got.MTP[1].Down == nil || len(got.MTP[0].Norm) != got.Config.HiddenSize {
		t.Fatalf("InitMTP left %+v", got.MTP)
	}
	if err := got.InitMTP(MaxMTPHeads+1, 9); err == nil {
		t.Fatal("InitMTP accepted too many heads")
	}
	// The heads' tensors without the config key are unexpected.
	if err := got.Save(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), mustMarshal(t, plain.Config), 0o644)
	if _, err := Load(dir, Options{Backend: cpu}); err == nil || !strings.Contains(err.Error(), "mtp.0.") {
		t.Fatalf("heads without num_nextn_predict_layers: %v", err)
	}
	// A config that names heads over a checkpoint without any (what a
	// trainer of the trunk alone writes) loads without heads.
	stale := t.TempDir()
	if err := plain.Save(stale); err != nil {
		t.Fatal(err)
	}
	headsCfg := plain.Config
	headsCfg.MTPHeads, headsCfg.MTPDraftVocab = 2, 10
	os.WriteFile(filepath.Join(stale, "config.json"), mustMarshal(t, headsCfg), 0o644)
	if got, err := Load(stale, Options{Backend: cpu}); err != nil || got.Config.MTPHeads != 0 || len(got.MTP) != 0 {
		t.Fatalf("stale head config: %v", err)
	}
	bad := plain.Config
	bad.MTPHeads = MaxMTPHeads + 1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "num_nextn_predict_layers") {
		t.Fatalf("Validate: %v", err)
	}
}

func mustMarshal(t *testing.T, c Config) []byte {
	t.Helper()
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDraftRejects(t *testing.T) {
	cpu := NewCPU(1)
	defer cpu.Close()
	m, _ := NewRandom(tinyMTP(t, 1), 3, Options{Backend: cpu})
	H := m.Config.HiddenSize
	for _, c := range []struct {
		head   int
		hidden []float32
		tokens []int
		want   string
	}{
		{1, make([]float32, H), []int{1}, "head 1 of 1"},
		{0, make([]float32, H), nil, "without tokens"},
		{0, make([]float32, H-1), []int{1}, "hidden values"},
		{0, make([]float32, H), []int{m.Config.VocabSize}, "outside the vocabulary"},
	} {
		if _, _, err := m.Draft(c.head, c.hidden, c.tokens); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Draft(%d, %d values, %v): %v, want %q", c.head, len(c.hidden), c.tokens, err, c.want)
		}
	}
	if _, _, err := m.GenerateGreedy(context.Background(), []*Sequence{m.NewSequence()}, [][]int{{1}}, 4, 2); err == nil {
		t.Fatal("GenerateGreedy drafted 2 tokens with 1 head")
	}
}

// Speculative greedy decoding gives plain greedy decoding's tokens, token
// for token, whatever the drafts: with the random heads (nearly every draft
// rejected) and with an oracle that drafts the true continuation with a
// few wrong tokens mixed in (long accepted runs, rejections at every depth,
// the bonus token after a fully accepted draft), for a batch of sequences
// of different lengths, one of which runs into the end of the context.
func TestGenerateGreedyMatchesPlain(t *testing.T) {
	cpu := NewCPU(2)
	defer cpu.Close()
	m, err := NewRandom(tinyMTP(t, 3), 8, Options{Backend: cpu, MaxContext: 60})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	prompts := [][]int{randomTokens(rng, 5, 300), randomTokens(rng, 9, 300), randomTokens(rng, 40, 300)}
	const n = 30
	newSeqs := func() []*Sequence {
		return []*Sequence{m.NewSequence(), m.NewSequence(), m.NewSequence()}
	}
	plain, st, err := m.GenerateGreedy(ctx, newSeqs(), prompts, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Drafted != 0 || len(plain[0]) != n || len(plain[2]) != 60-40+1 {
		t.Fatalf("plain decoding: %+v, lengths %d %d", st, len(plain[0]), len(plain[2]))
	}
	// The plain tokens are those of one-token Decode steps.
	seq := m.NewSequence()
	logits, _ := m.Forward(ctx, seq, prompts[1])
	last := logits[len(logits)-m.Config.VocabSize:]
	for i, want := range plain[1] {
		if got := argmax(last); got != want {
			t.Fatalf("token %d: decode %d, GenerateGreedy %d", i, got, want)
		}
		last, _ = m.Decode(ctx, seq, want)
	}

	for _, k := range []int{1, 3} {
		got, st, err := m.GenerateGreedy(ctx, newSeqs(), prompts, n, k)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, plain, slices.Equal) {
			t.Fatalf("k=%d heads: %v\nplain: %v", k, got, plain)
		}
		if st.Drafted == 0 {
			t.Fatalf("k=%d: no drafts", k)
		}
	}
	wrong := rand.New(rand.NewPCG(3, 4))
	seqs := newSeqs()
	oracle := func(d int, rows []int, hidden []float32, tokens []int) ([]float32, []int, error) {
		drafts := make([]int, len(rows))
		for r, i := range rows {
			// The sequence holds the prompt and all generated tokens but
			// the last, so depth d drafts generated token Len-prompt+1+d.
			at := seqs[i].Len() - len(prompts[i]) + 1 + d
			drafts[r] = plain[i][min(at, len(plain[i])-1)]
			if wrong.IntN(5) == 0 {
				drafts[r] = (drafts[r] + 1) % m.Config.VocabSize
			}
		}
		return hidden, drafts, nil
	}
	got, st, err := m.generateGreedy(ctx, seqs, prompts, n, 3, oracle)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, plain, slices.Equal) {
		t.Fatalf("oracle drafts: %v\nplain: %v", got, plain)
	}
	if st.AcceptanceRate() < 0.4 || st.MeanAcceptedLength() < 2 {
		t.Fatalf("oracle drafts: acceptance %.2f, mean accepted length %.2f", st.AcceptanceRate(), st.MeanAcceptedLength())
	}
	for i, s := range seqs {
		if want := len(prompts[i]) + len(plain[i]) - 1; s.Len() != want {
			t.Fatalf("sequence %d holds %d tokens after rollback, want %d", i, s.Len(), want)
		}
	}
}

// BenchmarkGenerateGreedy decodes 64 tokens for one sequence of the tiny
// model, plain and with 2 drafts per step from random heads (no draft
// accepted: the cost of speculation alone).
func BenchmarkGenerateGreedy(b *testing.B) {
	cpu := NewCPU(0)
	defer cpu.Close()
	cfg, _ := Preset("tiny")
	cfg.MTPHeads = 2
	m, err := NewRandom(cfg, 1, Options{Backend: cpu})
	if err != nil {
		b.Fatal(err)
	}
	prompt := randomTokens(rand.New(rand.NewPCG(1, 1)), 32, cfg.VocabSize)
	for _, k := range []int{0, 2} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := m.GenerateGreedy(context.Background(), []*Sequence{m.NewSequence()}, [][]int{prompt}, 64, k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// With a draft vocabulary the heads score only the low ids: the same
// logits there as over the whole vocabulary, -Inf above, in every storage
// type; the setting round-trips through config.json and is validated.
func TestDraftVocab(t *testing.T) {
	cpu := NewCPU(1)
	defer cpu.Close()
	for _, dt := range []DType{F32, BF16, Q8} {
		m, err := NewRandom(tinyMTP(t, 1), 4, Options{DType: dt, Backend: cpu})
		if err != nil {
			t.Fatal(err)
		}
		H, V := m.Config.HiddenSize, m.Config.VocabSize
		hidden := make([]float32, 2*H)
		for i := range hidden {
			hidden[i] = float32(i%7) - 3
		}
		_, full, err := m.Draft(0, hidden, []int{5, 17})
		if err != nil {
			t.Fatal(err)
		}
		m.Config.MTPDraftVocab = 100
		_, part, err := m.Draft(0, hidden, []int{5, 17})
		if err != nil {
			t.Fatal(err)
		}
		for r := range 2 {
			for i := range V {
				got, want := part[r*V+i], full[r*V+i]
				if i >= 100 {
					want = float32(math.Inf(-1))
				}
				if got != want {
					t.Fatalf("%s: row %d id %d: %v, want %v", dt, r, i, got, want)
				}
			}
		}
		dir := t.TempDir()
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		got, err := Load(dir, Options{Backend: cpu})
		if err != nil || got.Config.MTPDraftVocab != 100 {
			t.Fatalf("%s: loaded draft vocabulary %d: %v", dt, got.Config.MTPDraftVocab, err)
		}
	}
	c := tinyMTP(t, 1)
	c.MTPDraftVocab = c.VocabSize + 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "mtp_draft_vocab_size") {
		t.Fatalf("Validate: %v", err)
	}
}
