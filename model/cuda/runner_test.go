package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
)

// tinyModel builds a preset model with random weights on the CPU backend.
func tinyModel(t *testing.T, preset string, dt model.DType) *model.Model {
	t.Helper()
	cfg, err := model.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	cpu := model.NewCPU(1)
	t.Cleanup(cpu.Close)
	m, err := model.NewRandom(cfg, 7, model.Options{DType: dt, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// closeLogits fails unless got matches want within tol relative to want's
// largest magnitude.
func closeLogits(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d logits, want %d", what, len(got), len(want))
	}
	var scale, worst float64
	at := 0
	for i := range want {
		scale = max(scale, math.Abs(float64(want[i])))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	if worst > tol*scale || math.IsNaN(worst) {
		t.Fatalf("%s: logit %d is %v, want %v (worst error %.3g, %.3g of the largest logit %.3g)", what, at, got[at], want[at], worst, worst/scale, scale)
	}
}

// checkParity runs prompt through the CPU model and the Runner and compares
// the prompt's logits (within tol), then decodes steps tokens comparing
// logits (within decodeTol), then one greedy Next against the CPU's argmax.
func checkParity(t *testing.T, m *model.Model, r *Runner, prompt []int, steps int, tol, decodeTol float64) {
	t.Helper()
	ctx := context.Background()
	cs, gs := m.NewSequence(), r.NewSequence()
	defer gs.Close()
	want, err := m.Forward(ctx, cs, prompt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Forward(ctx, gs, prompt)
	if err != nil {
		t.Fatal(err)
	}
	closeLogits(t, "prompt", got, want, tol)
	next := argmaxOf(want[len(want)-m.Config.VocabSize:])
	for step := range steps {
		w, err := m.Decode(ctx, cs, next)
		if err != nil {
			t.Fatal(err)
		}
		g, err := r.Decode(ctx, gs, next)
		if err != nil {
			t.Fatal(err)
		}
		closeLogits(t, fmt.Sprintf("decode step %d", step), g, w, decodeTol)
		next = argmaxOf(w)
	}
	w, err := m.Decode(ctx, cs, next)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Next(ctx, []*Sequence{gs}, [][]int{{next}}, Sampling{})
	if err != nil || p[0] != argmaxOf(w) {
		t.Errorf("Next = %v, %v; the CPU's argmax is %d", p, err, argmaxOf(w))
	}
}

func argmaxOf(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// TestRunnerMatchesCPU runs the Runner on the emulator for Qwen2 and Qwen3
// shapes in float32 and bfloat16, through a prompt, a decode loop (graph
// replays), a batch of sequences at different positions, chunked prompts
// and on-device token selection, and compares every result with the CPU
// backend's forward pass.
func TestRunnerMatchesCPU(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		preset string
		dt     model.DType
		cublas bool
	}{
		{"tiny", model.F32, false},
		{"tiny", model.BF16, true},
		{"tiny-qwen3", model.F32, true},
		{"tiny-qwen3", model.BF16, false},
		{"tiny", model.Q8, false},
	} {
		t.Run(fmt.Sprintf("%s-%s-cublas=%v", tc.preset, tc.dt, tc.cublas), func(t *testing.T) {
			m := tinyModel(t, tc.preset, tc.dt)
			emu := newEmulator()
			emu.cublas = tc.cublas
			r, err := newRunner(emu, m, RunnerOptions{MaxRows: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// bfloat16 activations for cuBLAS round the inputs of prompt
			// products; everything else differs from the CPU only in
			// summation order.
			tol := 2e-4
			if tc.cublas && tc.dt == model.BF16 {
				tol = 2e-2
			}

			prompt := []int{1, 5, 9, 200, 3, 77, 8, 4, 150, 11, 12, 13}
			cpuSeq := m.NewSequence()
			want, err := m.Forward(ctx, cpuSeq, prompt)
			if err != nil {
				t.Fatal(err)
			}
			seq := r.NewSequence()
			defer seq.Close()
			got, err := r.Forward(ctx, seq, prompt)
			if err != nil {
				t.Fatal(err)
			}
			closeLogits(t, "prompt", got, want, tol)

			// Decode: each step replays the captured one-row graph.
			next := argmaxOf(want[len(want)-m.Config.VocabSize:])
			for step := range 6 {
				w, err := m.Decode(ctx, cpuSeq, next)
				if err != nil {
					t.Fatal(err)
				}
				g, err := r.Decode(ctx, seq, next)
				if err != nil {
					t.Fatal(err)
				}
				closeLogits(t, fmt.Sprintf("decode step %d", step), g, w, 2e-4+tol/10)
				next = argmaxOf(w)
			}
			if emu.captures != 1 || emu.replays != 6 {
				t.Errorf("decode steps: %d captures, %d replays; want one graph replayed 6 times", emu.captures, emu.replays)
			}
			if seq.Len() != len(prompt)+6 {
				t.Errorf("sequence length %d", seq.Len())
			}

			// A batch: the long sequence, a fresh one reading a prompt
			// chunk, and another decoding, in one pass.
			cpuB, cpuC := m.NewSequence(), m.NewSequence()
			b, c := r.NewSequence(), r.NewSequence()
			defer b.Close()
			defer c.Close()
			for _, s := range []struct {
				cs *model.Sequence
				gs *Sequence
			}{{cpuC, c}} {
				if _, err := m.Forward(ctx, s.cs, []int{2, 3}); err != nil {
					t.Fatal(err)
				}
				if _, err := r.Forward(ctx, s.gs, []int{2, 3}); err != nil {
					t.Fatal(err)
				}
			}
			batch := [][]int{{next}, {40, 41, 42}, {43}}
			wantB, err := m.Step(ctx, []*model.Sequence{cpuSeq, cpuB, cpuC}, batch)
			if err != nil {
				t.Fatal(err)
			}
			gotB, err := r.Step(ctx, []*Sequence{seq, b, c}, batch)
			if err != nil {
				t.Fatal(err)
			}
			for i := range wantB {
				closeLogits(t, fmt.Sprintf("batch row %d", i), gotB[i], wantB[i], tol)
			}

			// A prompt longer than MaxRows goes in chunks; Next picks the
			// CPU's greedy token on the device.
			long := make([]int, 40)
			for i := range long {
				long[i] = (i*37 + 5) % m.Config.VocabSize
			}
			cpuL := m.NewSequence()
			wantL, err := m.Forward(ctx, cpuL, long)
			if err != nil {
				t.Fatal(err)
			}
			gl := r.NewSequence()
			defer gl.Close()
			gotL, err := r.Forward(ctx, gl, long)
			if err != nil {
				t.Fatal(err)
			}
			closeLogits(t, "chunked prompt", gotL, wantL, tol)
			gn := r.NewSequence()
			defer gn.Close()
			picks, err := r.Next(ctx, []*Sequence{gn}, [][]int{long}, Sampling{})
			if err != nil {
				t.Fatal(err)
			}
			if wantTok := argmaxOf(wantL[len(wantL)-m.Config.VocabSize:]); picks[0] != wantTok {
				t.Errorf("Next picked %d, the CPU's argmax is %d", picks[0], wantTok)
			}
			if gn.Len() != len(long) {
				t.Errorf("Next left %d tokens", gn.Len())
			}
		})
	}
}

func TestRunnerSampling(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", model.F32)
	emu := newEmulator()
	r, err := newRunner(emu, m, RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	draw := func(seed uint64, temp float32) []int {
		s := r.NewSequence()
		defer s.Close()
		out := []int{}
		tok := []int{1, 2, 3}
		for range 8 {
			p, err := r.Next(ctx, []*Sequence{s}, [][]int{tok}, Sampling{Temperature: temp, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p[0])
			tok = []int{p[0]}
		}
		return out
	}
	a, b, c := draw(1, 1), draw(1, 1), draw(2, 1)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("same seed drew %v and %v", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("seeds 1 and 2 drew the same %v", a)
	}
	// A vanishing temperature is greedy decoding.
	if cold, greedy := draw(3, 1e-6), draw(0, 0); fmt.Sprint(cold) != fmt.Sprint(greedy) {
		t.Errorf("temperature 1e-6 drew %v, greedy %v", cold, greedy)
	}
	for _, bad := range []float32{-1, float32(math.NaN()), float32(math.Inf(1))} {
		if _, err := r.Next(ctx, []*Sequence{r.NewSequence()}, [][]int{{1}}, Sampling{Temperature: bad}); err == nil {
			t.Errorf("temperature %v accepted", bad)
		}
	}
}

func TestRunnerErrors(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", model.F32)
	emu := newEmulator()
	r, err := newRunner(emu, m, RunnerOptions{MaxRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	other, err := newRunner(newEmulator(), m, RunnerOptions{MaxRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s := r.NewSequence()
	if _, err := r.Forward(ctx, s, []int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"no tokens", func() error { _, err := r.Forward(ctx, s, nil); return err }, "no tokens"},
		{"token out of range", func() error { _, err := r.Decode(ctx, s, 300); return err }, "outside the vocabulary"},
		{"negative token", func() error { _, err := r.Decode(ctx, s, -1); return err }, "outside the vocabulary"},
		{"foreign sequence", func() error { _, err := r.Decode(ctx, other.NewSequence(), 1); return err }, "does not belong"},
		{"duplicate", func() error {
			_, err := r.Step(ctx, []*Sequence{s, s}, [][]int{{1}, {2}})
			return err
		}, "twice"},
		{"mismatched lists", func() error { _, err := r.Step(ctx, []*Sequence{s}, nil); return err }, "token lists"},
		{"context", func() error { _, err := r.Forward(ctx, s, make([]int, 510)); return err }, "context too long"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := r.Forward(ctx, s, make([]int, 510)); !errors.Is(err, model.ErrContextTooLong) {
		t.Errorf("context overflow does not wrap model.ErrContextTooLong: %v", err)
	}
	if s.Len() != 3 {
		t.Fatalf("failed steps changed the sequence: %d tokens", s.Len())
	}

	// A device failure mid-step leaves the sequence as it was.
	emu.failNext = errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")
	if _, err := r.Forward(ctx, s, []int{4, 5}); err == nil || !strings.Contains(err.Error(), "ILLEGAL_ADDRESS") {
		t.Errorf("device failure: %v", err)
	}
	if got := s.Tokens(); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("after a failed step the sequence is %v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Decode(cancelled, s, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if err := s.Truncate(1); err != nil || s.Len() != 1 {
		t.Errorf("Truncate: %v, %d", err, s.Len())
	}
	if err := s.Truncate(5); err == nil {
		t.Error("Truncate past the end accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Decode(ctx, s, 1); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("step on a closed sequence: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := emu.liveBytes(); n != 0 {
		t.Errorf("%d bytes of device memory left after closing the runner and its sequences", n)
	}
	if _, err := r.Decode(ctx, r.NewSequence(), 1); err == nil {
		t.Error("step on a closed runner succeeded")
	}
}

// TestKVCacheGrowth checks that a sequence's cache grows by doubling and
// keeps its contents: the logits after growth match the CPU's.
func TestKVCacheGrowth(t *testing.T) {
	if got := growthCapacity(0, 3, 512); got != 16 {
		t.Errorf("first capacity %d", got)
	}
	if got := growthCapacity(16, 17, 512); got != 32 {
		t.Errorf("doubling gave %d", got)
	}
	if got := growthCapacity(300, 301, 512); got != 512 {
		t.Errorf("capacity beyond the context: %d", got)
	}
	if got := growthCapacity(16, 100, 512); got != 100 {
		t.Errorf("a large step gave %d", got)
	}
	ctx := context.Background()
	m := tinyModel(t, "tiny-qwen3", model.F32)
	r, err := newRunner(newEmulator(), m, RunnerOptions{MaxRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, cs := r.NewSequence(), m.NewSequence()
	defer s.Close()
	for i := range 40 { // crosses capacities 16 and 32
		w, err := m.Decode(ctx, cs, i%m.Config.VocabSize)
		if err != nil {
			t.Fatal(err)
		}
		g, err := r.Decode(ctx, s, i%m.Config.VocabSize)
		if err != nil {
			t.Fatal(err)
		}
		closeLogits(t, fmt.Sprintf("token %d", i), g, w, 2e-4)
	}
	if s.capacity != 64 {
		t.Errorf("capacity %d after 40 tokens, want 64", s.capacity)
	}
}

func TestMetaLayout(t *testing.T) {
	for _, rows := range []int{1, 3, 8, 512} {
		l := newMetaLayout(rows)
		type field struct {
			name      string
			off, size int
		}
		fs := []field{{"tokens", l.tokens, 4}, {"positions", l.positions, 4}, {"outRows", l.outRows, 4}, {"sampled", l.sampled, 4},
			{"kcache", l.kcache, 8}, {"vcache", l.vcache, 8}, {"layerStride", l.layerStride, 8}, {"counters", l.counters, 8}}
		end := 0
		for _, f := range fs {
			if f.off%8 != 0 {
				t.Errorf("rows %d: %s at %d is not 8-byte aligned", rows, f.name, f.off)
			}
			if f.off < end {
				t.Errorf("rows %d: %s at %d overlaps the previous field ending at %d", rows, f.name, f.off, end)
			}
			end = f.off + f.size*rows
		}
		if l.size < end || l.size%8 != 0 {
			t.Errorf("rows %d: size %d for fields ending at %d", rows, l.size, end)
		}
	}
	l := newMetaLayout(2)
	b, err := l.encode(stepMeta{
		tokens: []int32{7, 8}, positions: []int32{0, 41}, kcache: []uint64{0x1000, 0x2000}, vcache: []uint64{0x3000, 0x4000},
		layerStride: []int64{64, 128}, outRows: []int32{1}, counters: []uint64{42},
	})
	if err != nil {
		t.Fatal(err)
	}
	le := func(off, n int) uint64 {
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[off+i])
		}
		return v
	}
	if le(l.tokens+4, 4) != 8 || le(l.positions+4, 4) != 41 || le(l.kcache+8, 8) != 0x2000 || le(l.vcache, 8) != 0x3000 ||
		le(l.layerStride+8, 8) != 128 || le(l.outRows, 4) != 1 || le(l.counters, 8) != 42 {
		t.Error("encoded metadata does not read back")
	}
	if _, err := l.encode(stepMeta{tokens: make([]int32, 3)}); err == nil {
		t.Error("metadata for 3 rows fit a 2-row layout")
	}
}

func TestNewRunnerRejectsShapes(t *testing.T) {
	cfg, _ := model.Preset("tiny")
	cfg.HeadDim, cfg.NumHeads, cfg.NumKVHeads, cfg.HiddenSize = 512, 1, 1, 512
	m, err := model.NewRandom(cfg, 1, model.Options{Backend: model.NewCPU(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newRunner(newEmulator(), m, RunnerOptions{}); err == nil || !strings.Contains(err.Error(), "head widths up to 256") {
		t.Errorf("head width 512: %v", err)
	}
	if _, err := newRunner(newEmulator(), nil, RunnerOptions{}); err == nil {
		t.Error("nil model accepted")
	}
	if _, err := newRunner(newEmulator(), tinyModel(t, "tiny", model.F32), RunnerOptions{MaxRows: -1}); err == nil {
		t.Error("negative MaxRows accepted")
	}
	emu := newEmulator()
	emu.failNext = errors.New("CUDA_ERROR_OUT_OF_MEMORY")
	if _, err := newRunner(emu, tinyModel(t, "tiny", model.F32), RunnerOptions{}); err == nil {
		t.Error("allocation failure ignored")
	}
	if emu.liveBytes() != 0 {
		t.Errorf("a failed NewRunner left %d bytes allocated", emu.liveBytes())
	}
}

// TestRunnerConcurrentSequences decodes several sequences from several
// goroutines at once; each must get exactly what it gets alone (run with
// -race).
func TestRunnerConcurrentSequences(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", model.F32)
	r, err := newRunner(newEmulator(), m, RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	generate := func(first int) []int {
		s := r.NewSequence()
		defer s.Close()
		out := []int{first}
		for range 5 {
			p, err := r.Next(ctx, []*Sequence{s}, [][]int{{out[len(out)-1]}}, Sampling{})
			if err != nil {
				t.Error(err)
				return nil
			}
			out = append(out, p[0])
		}
		return out
	}
	want := make([][]int, 4)
	for i := range want {
		want[i] = generate(10 + i)
	}
	got := make([][]int, 4)
	done := make(chan int)
	for i := range got {
		go func() {
			got[i] = generate(10 + i)
			done <- i
		}()
	}
	for range got {
		<-done
	}
	for i := range want {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Errorf("sequence %d: concurrently %v, alone %v", i, got[i], want[i])
		}
	}
}

// TestSequenceOutlivesRunner closes the runner first: the sequence's own
// cache is still freed by its Close.
func TestSequenceOutlivesRunner(t *testing.T) {
	emu := newEmulator()
	r, err := newRunner(emu, tinyModel(t, "tiny", model.F32), RunnerOptions{MaxRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := r.NewSequence()
	if _, err := r.Decode(context.Background(), s, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := emu.liveBytes(); n != 0 {
		t.Errorf("%d bytes left", n)
	}
}
