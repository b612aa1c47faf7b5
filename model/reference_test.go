package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// referenceForward is the numerically careful forward pass the fast path is
// checked against: plain loops, float64 everywhere, no caching, the model's
// own weights widened to float64 (so quantized models are compared with
// their dequantized weights and the test measures arithmetic error only).
// It returns the logits of every position of tokens, run from position 0.
func referenceForward(m *Model, tokens []int) [][]float64 {
	c := m.Config
	d := c.HeadDim
	group := c.NumHeads / c.NumKVHeads
	n := len(tokens)
	f64 := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	mat := func(w *Weight) [][]float64 {
		flat := w.Float32()
		out := make([][]float64, w.Rows())
		for r := range out {
			out[r] = f64(flat[r*w.Cols() : (r+1)*w.Cols()])
		}
		return out
	}
	linear := func(w [][]float64, bias []float32, x []float64) []float64 {
		y := make([]float64, len(w))
		for r, row := range w {
			var s float64
			for i, v := range row {
				s += v * x[i]
			}
			if bias != nil {
				s += float64(bias[r])
			}
			y[r] = s
		}
		return y
	}
	rms := func(x []float64, w []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(len(x))+c.RMSNormEps)
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = v * inv * float64(w[i])
		}
		return y
	}
	// RoPE as Hugging Face computes its angles: float32 inverse frequency
	// times float32 position, rounded to float32.
	rot := func(x []float64, pos int) {
		half := d / 2
		for i := range half {
			inv := 1 / float32(math.Pow(c.RopeTheta, float64(float32(2*i)/float32(d))))
			ang := float64(float32(pos) * inv)
			cs, sn := math.Cos(ang), math.Sin(ang)
			a, b := x[i], x[i+half]
			x[i] = a*cs - b*sn
			x[i+half] = b*cs + a*sn
		}
	}
	embed := mat(m.Embed)
	head := mat(m.LMHead)
	xs := make([][]float64, n)
	for t, tok := range tokens {
		xs[t] = append([]float64(nil), embed[tok]...)
	}
	for li := range m.Layers {
		l := &m.Layers[li]
		wq, wk, wv, wo := mat(l.Q), mat(l.K), mat(l.V), mat(l.O)
		wg, wu, wd := mat(l.Gate), mat(l.Up), mat(l.Down)
		qs := make([][]float64, n)
		ks := make([][]float64, n)
		vs := make([][]float64, n)
		for t := range n {
			h := rms(xs[t], l.AttnNorm)
			qs[t], ks[t], vs[t] = linear(wq, l.QBias, h), linear(wk, l.KBias, h), linear(wv, l.VBias, h)
			for hh := range c.NumHeads {
				if c.QKNorm {
					copy(qs[t][hh*d:], rms(qs[t][hh*d:(hh+1)*d], l.QNorm))
				}
				rot(qs[t][hh*d:(hh+1)*d], t)
			}
			for hh := range c.NumKVHeads {
				if c.QKNorm {
					copy(ks[t][hh*d:], rms(ks[t][hh*d:(hh+1)*d], l.KNorm))
				}
				rot(ks[t][hh*d:(hh+1)*d], t)
			}
		}
		for t := range n {
			att := make([]float64, c.NumHeads*d)
			for hh := range c.NumHeads {
				kv := hh / group
				scores := make([]float64, t+1)
				mx := math.Inf(-1)
				for j := 0; j <= t; j++ {
					var s float64
					for i := range d {
						s += qs[t][hh*d+i] * ks[j][kv*d+i]
					}
					scores[j] = s / math.Sqrt(float64(d))
					mx = max(mx, scores[j])
				}
				var sum float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				for j, p := range scores {
					for i := range d {
						att[hh*d+i] += p / sum * vs[j][kv*d+i]
					}
				}
			}
			o := linear(wo, l.OBias, att)
			for i := range o {
				xs[t][i] += o[i]
			}
			h := rms(xs[t], l.MLPNorm)
			g, u := linear(wg, nil, h), linear(wu, nil, h)
			for i := range g {
				g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
			}
			dn := linear(wd, nil, g)
			for i := range dn {
				xs[t][i] += dn[i]
			}
		}
	}
	out := make([][]float64, n)
	for t := range n {
		out[t] = linear(head, nil, rms(xs[t], m.Norm))
	}
	return out
}

// relErr is the normwise relative error max|got-want| / max|want|.
func relErr(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		num = max(num, math.Abs(float64(got[i])-w))
		den = max(den, math.Abs(w))
	}
	return num / den
}

// testConfigs covers both architectures with tied and untied heads.
func testConfigs(t *testing.T) map[string]Config {
	t.Helper()
	q2, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	q3, err := Preset("tiny-qwen3")
	if err != nil {
		t.Fatal(err)
	}
	q2u, q3t := q2, q3
	q2u.TieWordEmbeddings = false
	q3t.TieWordEmbeddings = true
	q3t.AttentionBias = true // exercises Qwen3's optional q/k/v/o biases
	return map[string]Config{"qwen2-tied": q2, "qwen2-untied": q2u, "qwen3-untied": q3, "qwen3-tied-bias": q3t}
}

// The fast path agrees with the float64 reference to within 1e-4 of the
// largest logit (normwise) for every dtype: float32 arithmetic over tiny
// layers stays near 1e-6, so the bound leaves room for summation order and
// the float32 exp, and would catch any wrong index or convention (those give
// errors of order 1). Prefill, token-by-token decode, a batched step and a
// mixed step must all match.
func TestForwardMatchesReference(t *testing.T) {
	const bound = 1e-4
	ctx := context.Background()
	cpu := NewCPU(2)
	defer cpu.Close()
	for name, cfg := range testConfigs(t) {
		for _, dt := range []DType{F32, BF16, Q8} {
			t.Run(fmt.Sprintf("%s/%s", name, dt), func(t *testing.T) {
				m, err := NewRandom(cfg, 7, Options{DType: dt, Backend: cpu})
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				toks := randomTokens(rng, 11, cfg.VocabSize)
				want := referenceForward(m, toks)

				seq := m.NewSequence()
				all, err := m.Forward(ctx, seq, toks)
				if err != nil {
					t.Fatal(err)
				}
				V := cfg.VocabSize
				for p := range toks {
					if e := relErr(all[p*V:(p+1)*V], want[p]); e > bound {
						t.Fatalf("Forward position %d: relative error %.2e > %.0e", p, e, bound)
					}
				}

				// Prefill 6 tokens, then decode one at a time, with decode
				// attention as dot products and as GEMMs.
				m.gemmAttentionKeys = 8
				seq = m.NewSequence()
				last, err := m.Step(ctx, []*Sequence{seq}, [][]int{toks[:6]})
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(last[0], want[5]); e > bound {
					t.Fatalf("prefill last logits: relative error %.2e", e)
				}
				for p := 6; p < len(toks); p++ {
					lg, err := m.Decode(ctx, seq, toks[p])
					if err != nil {
						t.Fatal(err)
					}
					if e := relErr(lg, want[p]); e > bound {
						t.Fatalf("decode position %d: relative error %.2e", p, e)
					}
				}
			})
		}
	}
}

// Batched and mixed steps give each sequence the logits it would get alone.
func TestBatchMatchesReference(t *testing.T) {
	const bound = 1e-4
	ctx := context.Background()
	cpu := NewCPU(2)
	defer cpu.Close()
	for name, cfg := range testConfigs(t) {
		t.Run(name, func(t *testing.T) {
			m, err := NewRandom(cfg, 3, Options{DType: F32, Backend: cpu})
			if err != nil {
				t.Fatal(err)
			}
			// The longer sequences decode with GEMM attention, the shorter
			// with dot products, in the same batch.
			m.gemmAttentionKeys = 9
			rng := rand.New(rand.NewPCG(5, 6))
			const nseq = 4
			prompts := make([][]int, nseq)
			want := make([][][]float64, nseq)
			seqs := make([]*Sequence, nseq)
			for i := range prompts {
				prompts[i] = randomTokens(rng, 3+2*i+3, cfg.VocabSize) // different lengths, so different positions
				want[i] = referenceForward(m, prompts[i])
				seqs[i] = m.NewSequence()
			}
			// Mixed step: sequences join with prompt chunks of different sizes.
			chunks := make([][]int, nseq)
			for i := range chunks {
				chunks[i] = prompts[i][:len(prompts[i])-3]
			}
			got, err := m.Step(ctx, seqs, chunks)
			if err != nil {
				t.Fatal(err)
			}
			for i := range seqs {
				if e := relErr(got[i], want[i][len(chunks[i])-1]); e > bound {
					t.Fatalf("mixed step, sequence %d: relative error %.2e", i, e)
				}
			}
			// Three batched decode steps.
			for s := 3; s > 0; s-- {
				toks := make([]int, nseq)
				for i := range toks {
					toks[i] = prompts[i][len(prompts[i])-s]
				}
				got, err := m.Batch(ctx, seqs, toks)
				if err != nil {
					t.Fatal(err)
				}
				for i := range seqs {
					if e := relErr(got[i], want[i][len(prompts[i])-s]); e > bound {
						t.Fatalf("batch decode, sequence %d: relative error %.2e", i, e)
					}
				}
			}
		})
	}
}

// Reduced-precision weights stay close to the float32 model they came from:
// bf16 keeps 8 mantissa bits (relative rounding 2⁻⁹ per weight) and Q8 has
// 127 levels per block of 32, so logits differ by a few per cent at most.
func TestReducedPrecisionNearF32(t *testing.T) {
	ctx := context.Background()
	cfg, _ := Preset("tiny")
	cpu := NewCPU(2)
	defer cpu.Close()
	ref, err := NewRandom(cfg, 9, Options{DType: F32, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	toks := randomTokens(rand.New(rand.NewPCG(1, 1)), 8, cfg.VocabSize)
	want := referenceForward(ref, toks)
	for dt, bound := range map[DType]float64{BF16: 0.03, Q8: 0.05} {
		m, err := NewRandom(cfg, 9, Options{DType: dt, Backend: cpu})
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Forward(ctx, m.NewSequence(), toks)
		if err != nil {
			t.Fatal(err)
		}
		V := cfg.VocabSize
		for p := range toks {
			if e := relErr(got[p*V:(p+1)*V], want[p]); e > bound {
				t.Errorf("%s position %d: relative error to f32 %.3f > %.2f", dt, p, e, bound)
			}
		}
	}
}
