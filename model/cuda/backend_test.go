package cuda

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
)

// TestBackendMatchesCPU plugs Backend into model.Options and compares a
// forward pass (prompt, decode, and attention long enough for the model's
// GEMM path through Sgemm) with the CPU backend.
func TestBackendMatchesCPU(t *testing.T) {
	ctx := context.Background()
	for _, dt := range []model.DType{model.F32, model.BF16} {
		cfg, _ := model.Preset("tiny-qwen3")
		cpu := model.NewCPU(1)
		defer cpu.Close()
		want, err := model.NewRandom(cfg, 3, model.Options{DType: dt, Backend: cpu})
		if err != nil {
			t.Fatal(err)
		}
		emu := newEmulator()
		b := newBackend(emu, 1)
		got, err := model.NewRandom(cfg, 3, model.Options{DType: dt, Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		prompt := make([]int, 300) // past the model's 256-key switch to GEMM attention
		for i := range prompt {
			prompt[i] = (i * 7) % cfg.VocabSize
		}
		ws, gs := want.NewSequence(), got.NewSequence()
		wl, err := want.Forward(ctx, ws, prompt[:20])
		if err != nil {
			t.Fatal(err)
		}
		gl, err := got.Forward(ctx, gs, prompt[:20])
		if err != nil {
			t.Fatal(err)
		}
		closeLogits(t, string(dt)+" prompt", gl, wl, 2e-4)
		wl, _ = want.Forward(ctx, ws, prompt[20:])
		gl, _ = got.Forward(ctx, gs, prompt[20:])
		closeLogits(t, string(dt)+" long prompt", gl, wl, 2e-4)
		wd, _ := want.Decode(ctx, ws, 5)
		gd, _ := got.Decode(ctx, gs, 5)
		closeLogits(t, string(dt)+" decode", gd, wd, 2e-4)
		if err := b.Err(); err != nil {
			t.Fatalf("backend fell back to the CPU: %v", err)
		}
		if emu.launches["sgemm"] == 0 || emu.launches["linear_tiled_f32"]+emu.launches["linear_tiled_bf16"] == 0 ||
			emu.launches["linear_small_f32"]+emu.launches["linear_small_bf16"] == 0 {
			t.Errorf("launches %v: want the small and tiled linear kernels and sgemm", emu.launchCounts())
		}
		// Each matrix product's weight went up once, however many calls
		// used it: seven per layer and the (untied) LM head; the
		// embedding is only read row by row on the host.
		if n := len(b.weights); n != 7*cfg.NumLayers+1 {
			t.Errorf("%d device weights, want %d", n, 7*cfg.NumLayers+1)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if emu.liveBytes() != 0 {
			t.Errorf("%d bytes left after Close", emu.liveBytes())
		}
	}
}

// TestBackendSgemm checks Sgemm's operand extents, transpositions, padding
// between rows and BLAS's beta semantics against the CPU.
func TestBackendSgemm(t *testing.T) {
	emu := newEmulator()
	b := newBackend(emu, 1)
	defer b.Close()
	cpu := model.NewCPU(1)
	defer cpu.Close()
	rng := rand.New(rand.NewPCG(4, 5))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			for _, beta := range []float32{0, 0.5} {
				m, n, k := 5, 7, 3
				lda, ldb, ldc := 9, 11, 8
				a, bm, c := fill(lda*9), fill(ldb*9), fill(ldc*m)
				want := append([]float32(nil), c...)
				cpu.Sgemm(ta, tb, m, n, k, 1.5, a, lda, bm, ldb, beta, want, ldc)
				b.Sgemm(ta, tb, m, n, k, 1.5, a, lda, bm, ldb, beta, c, ldc)
				closeLogits(t, "sgemm", c, want, 1e-6)
			}
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestBackendFallsBackToCPU makes the device fail and checks that results
// stay correct on the CPU and Err reports the cause.
func TestBackendFallsBackToCPU(t *testing.T) {
	emu := newEmulator()
	b := newBackend(emu, 1)
	defer b.Close()
	w, err := model.NewWeight(model.F32, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	emu.failNext = errors.New("CUDA_ERROR_OUT_OF_MEMORY")
	y := make([]float32, 2)
	b.Linear(y, []float32{1, 1, 1}, 1, w)
	if y[0] != 6 || y[1] != 15 {
		t.Errorf("fallback Linear = %v, want [6 15]", y)
	}
	if err := b.Err(); err == nil || !strings.Contains(err.Error(), "OUT_OF_MEMORY") {
		t.Errorf("Err() = %v", err)
	}
	before := len(emu.launches)
	b.Linear(y, []float32{0, 1, 0}, 1, w)
	if y[0] != 2 || y[1] != 5 || len(emu.launches) != before {
		t.Errorf("after a failure Linear = %v and launched on the device: %v", y, emu.launchCounts())
	}
	if b.Threads() < 1 {
		t.Error("Threads")
	}
	var sum [10]int
	b.Parallel(10, func(i int) { sum[i] = i })
	if sum[9] != 9 {
		t.Error("Parallel skipped work")
	}
}

func TestSgemmExtent(t *testing.T) {
	if sgemmExtent(3, 4, 10) != 24 || sgemmExtent(0, 4, 10) != 0 || sgemmExtent(1, 4, 4) != 4 {
		t.Error("sgemmExtent")
	}
}
