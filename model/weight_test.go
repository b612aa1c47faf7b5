package model

import (
	"slices"
	"testing"
)

func TestWeight(t *testing.T) {
	v := []float32{1, -2, 0.5, 3, 0, -0.25}
	for _, dt := range []DType{F32, BF16, Q8} {
		w, err := NewWeight(dt, slices.Clone(v), 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if w.Rows() != 2 || w.Cols() != 3 || w.DType() != dt {
			t.Fatalf("%s: shape %d×%d dtype %s", dt, w.Rows(), w.Cols(), w.DType())
		}
		// bf16 holds these values exactly; Q8 is within half a step of
		// its row's largest magnitude / 127 (at most 3/254 here).
		got := w.Float32()
		for i := range v {
			if d := got[i] - v[i]; d > 0.02 || d < -0.02 {
				t.Errorf("%s: element %d = %g, want %g", dt, i, got[i], v[i])
			}
		}
		row := make([]float32, 3)
		w.Row(row, 1)
		if !slices.Equal(row, got[3:]) {
			t.Errorf("%s: Row(1) = %v, want %v", dt, row, got[3:])
		}
	}
	if _, err := NewWeight(F32, v, 4, 2); err == nil {
		t.Error("mismatched shape accepted")
	}
	if _, err := NewWeight("f8", v, 2, 3); err == nil {
		t.Error("unknown dtype accepted")
	}
	if _, err := ParseDType("int4"); err == nil {
		t.Error("ParseDType accepted int4")
	}
}

// The preset's parameter count matches the published Qwen2.5-0.5B
// (494,032,768 with the tied head counted once).
func TestPresetParams(t *testing.T) {
	cfg, _ := Preset("qwen2.5-0.5b")
	m, err := newEmpty(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.NumParams(); got != 494032768 {
		t.Errorf("qwen2.5-0.5b has %d parameters, want 494032768", got)
	}
	if _, err := Preset("gpt2"); err == nil {
		t.Error("unknown preset accepted")
	}
	if names := PresetNames(); !slices.IsSorted(names) || len(names) != 4 {
		t.Errorf("PresetNames() = %v", names)
	}
}
