package cuda

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
)

// stepBoth runs one StepOutputs on both decoders and compares every
// output: the runner's logits and hidden states match the CPU's within
// tol of their largest magnitude, row for row.
func stepBoth(t *testing.T, what string, cpu, gpu model.Decoder, cs, gs []model.DecoderSequence, tokens [][]int, all []bool, tol float64) []model.StepOutput {
	t.Helper()
	ctx := context.Background()
	want, err := cpu.StepOutputs(ctx, cs, tokens, all)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.StepOutputs(ctx, gs, tokens, all)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i := range want {
		closeLogits(t, fmt.Sprintf("%s: sequence %d logits", what, i), got[i].Logits, want[i].Logits, tol)
		closeLogits(t, fmt.Sprintf("%s: sequence %d hidden states", what, i), got[i].Hidden, want[i].Hidden, tol)
	}
	return got
}

// TestRunnerDecoder drives the Runner through model.Decoder, the interface
// model/engine generates with, next to the CPU model's Decoder: mixed
// steps with per-sequence all flags (a prompt longer than the pass, read
// in chunks; a decode batch replaying a graph; a verification step of
// drafts), the MTP heads, and a prefix cache whose keys and values travel
// through the host and restore a sequence that continues bit for bit as
// the original.
func TestRunnerDecoder(t *testing.T) {
	m := tinyModel(t, "tiny-qwen3", model.F32)
	if err := m.InitMTP(2, 3); err != nil {
		t.Fatal(err)
	}
	emu := newEmulator()
	checkDecoder(t, emu, m, 2e-4)
	if n := emu.liveBytes(); n != 0 {
		t.Errorf("%d bytes of device memory left", n)
	}
}

// checkDecoder runs TestRunnerDecoder's steps on a runner of m over x (the
// emulator, the kernel sources on CPU threads, or a GPU), comparing within
// tol, and closes it.
func checkDecoder(t *testing.T, x executor, m *model.Model, tol float64) {
	t.Helper()
	ctx := context.Background()
	r, err := newRunner(x, m, RunnerOptions{MaxRows: 16})
	if err != nil {
		t.Fatal(err)
	}
	cpu, gpu := m.Decoder(), r.Decoder()
	if gpu.Config() != cpu.Config() || gpu.MaxContext() != cpu.MaxContext() || gpu.MTPHeads() != 2 {
		t.Fatalf("runner decoder: config %+v, context %d, %d heads", gpu.Config(), gpu.MaxContext(), gpu.MTPHeads())
	}
	V := m.Config.VocabSize
	prompt := func(n, seed int) []int {
		p := make([]int, n)
		for i := range p {
			p[i] = (i*31 + seed*17 + 5) % V
		}
		return p
	}
	cs := []model.DecoderSequence{cpu.NewSequence(), cpu.NewSequence()}
	gs := []model.DecoderSequence{gpu.NewSequence(), gpu.NewSequence()}
	out := stepBoth(t, "prompts", cpu, gpu, cs, gs, [][]int{prompt(9, 1), prompt(20, 2)}, []bool{true, false}, tol)
	if len(out[0].Logits) != 9*V || len(out[1].Logits) != V || len(out[1].Hidden) != m.Config.HiddenSize {
		t.Fatalf("prompt outputs: %d and %d logits, %d hidden", len(out[0].Logits), len(out[1].Logits), len(out[1].Hidden))
	}
	emu, _ := x.(*emulator)
	var captures, replays int
	if emu != nil {
		captures, replays = emu.captures, emu.replays
	}
	stepBoth(t, "decode", cpu, gpu, cs, gs, [][]int{{3}, {4}}, nil, tol)
	stepBoth(t, "decode again", cpu, gpu, cs, gs, [][]int{{5}, {6}}, nil, tol)
	if emu != nil && (emu.captures != captures+1 || emu.replays != replays+2) {
		t.Errorf("two decode steps: %d captures, %d replays; want one graph replayed twice", emu.captures-captures, emu.replays-replays)
	}
	out = stepBoth(t, "verify drafts", cpu, gpu, cs, gs, [][]int{{7, 8, 9}, {10}}, []bool{true, false}, tol)
	next, logits, err := gpu.Draft(0, out[1].Hidden, []int{11})
	if err != nil || len(next) != m.Config.HiddenSize || len(logits) != V {
		t.Fatalf("draft: %d hidden, %d logits, %v", len(next), len(logits), err)
	}

	// Keys and values read back match the CPU's.
	for i := range cs {
		ck, cv, err := cs[i].ReadKV(0, cs[i].Len())
		if err != nil {
			t.Fatal(err)
		}
		gk, gv, err := gs[i].ReadKV(0, gs[i].Len())
		if err != nil {
			t.Fatal(err)
		}
		for l := range ck {
			closeLogits(t, fmt.Sprintf("sequence %d layer %d keys", i, l), gk[l], ck[l], tol)
			closeLogits(t, fmt.Sprintf("sequence %d layer %d values", i, l), gv[l], cv[l], tol)
		}
	}

	// A restored sequence continues exactly as the one it was stored from.
	cache := gpu.NewPrefixCache(1 << 30)
	if err := cache.Store(gs[1]); err != nil {
		t.Fatal(err)
	}
	stored := gs[1].Tokens()
	restored := gpu.NewSequence()
	n, err := cache.Restore(restored, append(slices.Clone(stored), 12))
	if err != nil || n != len(stored) {
		t.Fatalf("restored %d of %d tokens: %v", n, len(stored), err)
	}
	a, err := gpu.StepOutputs(ctx, []model.DecoderSequence{gs[1]}, [][]int{{12}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gpu.StepOutputs(ctx, []model.DecoderSequence{restored}, [][]int{{12}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a[0].Logits, b[0].Logits) || !slices.Equal(a[0].Hidden, b[0].Hidden) {
		t.Error("a sequence restored from the prefix cache steps differently from its original")
	}

	if _, err := gpu.StepOutputs(ctx, []model.DecoderSequence{cpu.NewSequence()}, [][]int{{1}}, nil); err == nil || !strings.Contains(err.Error(), "*model.Sequence") {
		t.Errorf("a CPU sequence on the runner: %v", err)
	}
	for _, s := range append(gs, restored) {
		if err := s.(*Sequence).Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSequenceKVErrors(t *testing.T) {
	m := tinyModel(t, "tiny", model.F32)
	r, err := newRunner(newEmulator(), m, RunnerOptions{MaxRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	full := r.NewSequence()
	if _, err := r.Forward(context.Background(), full, []int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	k, v, err := full.ReadKV(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	closed := r.NewSequence()
	closed.Close()
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"read past the end", func() error { _, _, err := full.ReadKV(1, 4); return err }, "[1, 4)"},
		{"read a closed sequence", func() error { _, _, err := closed.ReadKV(0, 0); return err }, "closed"},
		{"write into a full sequence", func() error { return full.WriteKV([]int{1, 2, 3}, k, v) }, "want an empty one"},
		{"write into a closed sequence", func() error { return closed.WriteKV([]int{1, 2, 3}, k, v) }, "closed"},
		{"too few layers", func() error { return r.NewSequence().WriteKV([]int{1, 2, 3}, k[:1], v[:1]) }, "1 and 1 layers"},
		{"too few positions", func() error { return r.NewSequence().WriteKV([]int{1, 2}, k, v) }, "for 2 positions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
