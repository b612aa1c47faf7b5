package model

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// hostKV is a DecoderSequence that is not a *Sequence, so the prefix
// cache moves its keys and values through ReadKV and WriteKV, as it does a
// device runner's.
type hostKV struct{ *Sequence }

// equalKV reports whether two sequences hold the same keys and values, bit
// for bit.
func equalKV(t *testing.T, a, b DecoderSequence) bool {
	t.Helper()
	ak, av, err := a.ReadKV(0, a.Len())
	if err != nil {
		t.Fatal(err)
	}
	bk, bv, err := b.ReadKV(0, b.Len())
	if err != nil {
		t.Fatal(err)
	}
	for l := range ak {
		if !slices.Equal(ak[l], bk[l]) || !slices.Equal(av[l], bv[l]) {
			return false
		}
	}
	return slices.Equal(a.Tokens(), b.Tokens())
}

// The Decoder of a Model steps exactly as the Model does.
func TestModelDecoderMatchesModel(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", F32)
	d := m.Decoder()
	if d.Config().VocabSize != m.Config.VocabSize || d.MaxContext() != m.MaxContext() || d.MTPHeads() != len(m.MTP) {
		t.Fatalf("decoder reports config %+v, context %d, %d heads", d.Config(), d.MaxContext(), d.MTPHeads())
	}
	rng := rand.New(rand.NewPCG(5, 6))
	prompts := [][]int{randomTokens(rng, 9, m.Config.VocabSize), randomTokens(rng, 3, m.Config.VocabSize)}
	a, b := d.NewSequence(), d.NewSequence()
	got, err := d.StepOutputs(ctx, []DecoderSequence{a, b}, prompts, []bool{true, false})
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := m.NewSequence(), m.NewSequence()
	want, err := m.StepOutputs(ctx, []*Sequence{ma, mb}, prompts, []bool{true, false})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !slices.Equal(got[i].Logits, want[i].Logits) || !slices.Equal(got[i].Hidden, want[i].Hidden) {
			t.Errorf("sequence %d: the decoder's outputs differ from the model's", i)
		}
	}
	if !equalKV(t, a, ma) || !equalKV(t, b, mb) {
		t.Error("the decoder's sequences hold other keys and values than the model's")
	}
	if _, err := d.StepOutputs(ctx, []DecoderSequence{hostKV{m.NewSequence()}}, [][]int{{1}}, nil); err == nil || !strings.Contains(err.Error(), "model.hostKV") {
		t.Errorf("a foreign sequence type: %v", err)
	}
}

func TestSequenceKV(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny-qwen3", F32)
	rng := rand.New(rand.NewPCG(7, 8))
	prompt := randomTokens(rng, 12, m.Config.VocabSize)
	src := m.NewSequence()
	if _, err := m.Forward(ctx, src, prompt); err != nil {
		t.Fatal(err)
	}
	k, v, err := src.ReadKV(0, 12)
	if err != nil {
		t.Fatal(err)
	}
	dst := m.NewSequence()
	if err := dst.WriteKV(prompt, k, v); err != nil {
		t.Fatal(err)
	}
	if !equalKV(t, src, dst) {
		t.Fatal("a written sequence differs from the one read")
	}
	// The copy decodes as the original does.
	a, _ := m.Decode(ctx, src, 4)
	b, _ := m.Decode(ctx, dst, 4)
	if !slices.Equal(a, b) {
		t.Error("decoding after WriteKV differs")
	}
	part, _, err := src.ReadKV(3, 5)
	if err != nil || len(part[0]) != 2*m.kvDim() || !slices.Equal(part[1], k[1][3*m.kvDim():5*m.kvDim()]) {
		t.Errorf("ReadKV(3, 5): %d floats, %v", len(part[0]), err)
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"read past the end", func() error { _, _, err := src.ReadKV(0, 14); return err }, "[0, 14)"},
		{"read backwards", func() error { _, _, err := src.ReadKV(5, 3); return err }, "[5, 3)"},
		{"write into a full sequence", func() error { return src.WriteKV(prompt, k, v) }, "want an empty one"},
		{"too few layers", func() error { return m.NewSequence().WriteKV(prompt, k[:1], v[:1]) }, "1 and 1 layers"},
		{"too few positions", func() error { return m.NewSequence().WriteKV(prompt[:5], k, v) }, "for 5 positions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// A prefix cache restores and stores a sequence it reaches only through
// ReadKV and WriteKV exactly as it does a *Sequence.
func TestPrefixCacheThroughKV(t *testing.T) {
	ctx := context.Background()
	m := tinyModel(t, "tiny", F32)
	rng := rand.New(rand.NewPCG(9, 10))
	prefix := randomTokens(rng, 20, m.Config.VocabSize)
	q1 := append(slices.Clone(prefix), randomTokens(rng, 6, m.Config.VocabSize)...)
	q2 := append(slices.Clone(prefix), randomTokens(rng, 4, m.Config.VocabSize)...)

	direct, viaKV := NewPrefixCache(m, 1<<30), NewPrefixCache(m, 1<<30)
	for _, tc := range []struct {
		cache *PrefixCache
		seq   DecoderSequence
	}{{direct, m.NewSequence()}, {viaKV, hostKV{m.NewSequence()}}} {
		if _, err := m.Forward(ctx, unwrap(tc.seq), q1); err != nil {
			t.Fatal(err)
		}
		if err := tc.cache.Store(tc.seq); err != nil {
			t.Fatal(err)
		}
	}
	if direct.Bytes() != viaKV.Bytes() || direct.Stats() != viaKV.Stats() {
		t.Fatalf("stored %d bytes %+v directly, %d bytes %+v through KV", direct.Bytes(), direct.Stats(), viaKV.Bytes(), viaKV.Stats())
	}
	a, b := m.NewSequence(), hostKV{m.NewSequence()}
	na, err := direct.Restore(a, q2)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := viaKV.Restore(b, q2)
	if err != nil {
		t.Fatal(err)
	}
	if na != len(prefix) || nb != na {
		t.Fatalf("restored %d tokens directly and %d through KV, want %d", na, nb, len(prefix))
	}
	if !equalKV(t, a, b) {
		t.Error("restored keys and values differ")
	}
	if direct.Stats() != viaKV.Stats() {
		t.Errorf("stats %+v directly, %+v through KV", direct.Stats(), viaKV.Stats())
	}
	if _, err := viaKV.Restore(b, q2); err == nil || !strings.Contains(err.Error(), "want an empty one") {
		t.Errorf("restore into a full sequence: %v", err)
	}
}

func unwrap(s DecoderSequence) *Sequence {
	if h, ok := s.(hostKV); ok {
		return h.Sequence
	}
	return s.(*Sequence)
}
