package nn

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/livehat/livehat/model/safetensors"
)

// AdamWConfig holds AdamW's hyper-parameters (the learning rate comes from
// a Schedule at every step).
type AdamWConfig struct {
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
}

// DefaultAdamW is the configuration most LLM fine-tuning recipes use.
func DefaultAdamW() AdamWConfig {
	return AdamWConfig{Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1}
}

// AdamW is Adam with decoupled weight decay (Loshchilov & Hutter), as
// torch.optim.AdamW computes it, with moments kept per parameter name.
type AdamW struct {
	Config AdamWConfig
	steps  int
	m, v   map[string][]float32
}

// NewAdamW returns an optimizer with zero moments.
func NewAdamW(cfg AdamWConfig) *AdamW {
	return &AdamW{Config: cfg, m: map[string][]float32{}, v: map[string][]float32{}}
}

// Steps returns the number of updates made.
func (o *AdamW) Steps() int { return o.steps }

// Step updates every parameter from its gradient with learning rate lr:
// p ← p − lr·wd·p (matrices only), then the bias-corrected Adam step.
func (o *AdamW) Step(params []Param, lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("nn: adamw: learning rate %g", lr)
	}
	o.steps++
	c := o.Config
	bc1 := 1 - math.Pow(c.Beta1, float64(o.steps))
	bc2 := 1 - math.Pow(c.Beta2, float64(o.steps))
	for _, p := range params {
		m, v := o.m[p.Name], o.v[p.Name]
		if m == nil {
			m, v = make([]float32, len(p.Value)), make([]float32, len(p.Value))
			o.m[p.Name], o.v[p.Name] = m, v
		}
		if len(m) != len(p.Value) || len(p.Grad) != len(p.Value) {
			return fmt.Errorf("nn: adamw: %s has %d values, %d gradients and %d moments", p.Name, len(p.Value), len(p.Grad), len(m))
		}
		decay := 1.0
		if p.Decay {
			decay = 1 - lr*c.WeightDecay
		}
		for i, g64 := range p.Grad {
			g := float64(g64)
			mi := c.Beta1*float64(m[i]) + (1-c.Beta1)*g
			vi := c.Beta2*float64(v[i]) + (1-c.Beta2)*g*g
			m[i], v[i] = float32(mi), float32(vi)
			p.Value[i] = float32(float64(p.Value[i])*decay - lr*(mi/bc1)/(math.Sqrt(vi/bc2)+c.Eps))
		}
	}
	return nil
}

// Save writes the optimizer state (moments as "<name>.exp_avg" and
// "<name>.exp_avg_sq", the step count in the metadata) to a safetensors
// file.
func (o *AdamW) Save(path string) error {
	var ts []safetensors.Tensor
	for name, m := range o.m {
		for suffix, v := range map[string][]float32{".exp_avg": m, ".exp_avg_sq": o.v[name]} {
			data, err := safetensors.EncodeFloat32(safetensors.F32, v)
			if err != nil {
				return fmt.Errorf("nn: adamw: %s: %w", name, err)
			}
			ts = append(ts, safetensors.Tensor{Name: name + suffix, DType: safetensors.F32, Shape: []int{len(v)}, Data: data})
		}
	}
	meta := map[string]string{"step": strconv.Itoa(o.steps), "beta1": fmtFloat(o.Config.Beta1),
		"beta2": fmtFloat(o.Config.Beta2), "eps": fmtFloat(o.Config.Eps), "weight_decay": fmtFloat(o.Config.WeightDecay)}
	if err := safetensors.WriteFile(path, ts, meta); err != nil {
		return fmt.Errorf("nn: adamw: %w", err)
	}
	return nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// LoadAdamW reads an optimizer written by Save.
func LoadAdamW(path string) (*AdamW, error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nn: adamw: %w", err)
	}
	defer f.Close()
	meta := f.Metadata()
	o := NewAdamW(AdamWConfig{})
	if o.steps, err = strconv.Atoi(meta["step"]); err != nil {
		return nil, fmt.Errorf("nn: adamw: %s: step: %w", path, err)
	}
	for key, dst := range map[string]*float64{"beta1": &o.Config.Beta1, "beta2": &o.Config.Beta2, "eps": &o.Config.Eps, "weight_decay": &o.Config.WeightDecay} {
		if *dst, err = strconv.ParseFloat(meta[key], 64); err != nil {
			return nil, fmt.Errorf("nn: adamw: %s: %s: %w", path, key, err)
		}
	}
	for _, info := range f.Tensors() {
		_, v, err := f.ReadFloat32(info.Name)
		if err != nil {
			return nil, fmt.Errorf("nn: adamw: %w", err)
		}
		switch name := info.Name; {
		case strings.HasSuffix(name, ".exp_avg_sq"):
			o.v[name[:len(name)-len(".exp_avg_sq")]] = v
		case strings.HasSuffix(name, ".exp_avg"):
			o.m[name[:len(name)-len(".exp_avg")]] = v
		default:
			return nil, fmt.Errorf("nn: adamw: %s: unexpected tensor %q", path, name)
		}
	}
	for name := range o.m {
		if len(o.v[name]) != len(o.m[name]) {
			return nil, fmt.Errorf("nn: adamw: %s: moments of %q disagree", path, name)
		}
	}
	return o, nil
}

// ClipGradNorm scales the gradients down so that their global L2 norm is at
// most maxNorm (no clipping when maxNorm ≤ 0), as
// torch.nn.utils.clip_grad_norm_ does, and returns the norm before
// clipping.
func ClipGradNorm(params []Param, maxNorm float64) float64 {
	var ss float64
	for _, p := range params {
		for _, g := range p.Grad {
			ss += float64(g) * float64(g)
		}
	}
	norm := math.Sqrt(ss)
	if maxNorm > 0 && norm > maxNorm {
		f := float32(maxNorm / (norm + 1e-6))
		for _, p := range params {
			for i := range p.Grad {
				p.Grad[i] *= f
			}
		}
	}
	return norm
}

// Schedule is a linear warm-up to Peak followed by a cosine decay to
// Peak·MinRatio at step Total.
type Schedule struct {
	Peak     float64 `json:"peak"`
	Warmup   int     `json:"warmup"`
	Total    int     `json:"total"`
	MinRatio float64 `json:"min_ratio"`
}

// LR returns the learning rate of step (counted from 0).
func (s Schedule) LR(step int) float64 {
	if step < s.Warmup {
		return s.Peak * float64(step+1) / float64(s.Warmup)
	}
	span := max(s.Total-s.Warmup, 1)
	progress := min(float64(step-s.Warmup)/float64(span), 1)
	low := s.Peak * s.MinRatio
	return low + (s.Peak-low)*0.5*(1+math.Cos(math.Pi*progress))
}

// ClipAndStep is one optimizer update of m's trainable parameters: the
// gradients are clipped to the global norm maxNorm (≤ 0: not clipped), a
// non-finite norm is refused before it can corrupt the weights, and AdamW
// steps with learning rate lr. It returns the norm before clipping.
func (o *AdamW) ClipAndStep(m *Model, maxNorm, lr float64) (float64, error) {
	params := m.Params()
	norm := ClipGradNorm(params, maxNorm)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm, fmt.Errorf("nn: gradient norm %g", norm)
	}
	return norm, o.Step(params, lr)
}
