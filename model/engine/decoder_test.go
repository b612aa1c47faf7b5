package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/cuda"
)

// hostDecoder is a model.Decoder over the CPU model whose sequences are
// not *model.Sequence values and must be closed, as a GPU runner's are:
// the prefix cache reaches their keys and values only through ReadKV and
// WriteKV, and the engine must release every sequence it opens.
type hostDecoder struct {
	model.Decoder
	m *model.Model

	mu   sync.Mutex
	open map[*hostSequence]bool
}

type hostSequence struct {
	*model.Sequence
	d *hostDecoder
}

func (s *hostSequence) Close() error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if !s.d.open[s] {
		return errors.New("sequence closed twice")
	}
	delete(s.d.open, s)
	return nil
}

func (d *hostDecoder) NewSequence() model.DecoderSequence {
	s := &hostSequence{Sequence: d.m.NewSequence(), d: d}
	d.mu.Lock()
	d.open[s] = true
	d.mu.Unlock()
	return s
}

func (d *hostDecoder) StepOutputs(ctx context.Context, seqs []model.DecoderSequence, tokens [][]int, all []bool) ([]model.StepOutput, error) {
	own := make([]*model.Sequence, len(seqs))
	d.mu.Lock()
	for i, s := range seqs {
		hs := s.(*hostSequence)
		if !d.open[hs] {
			d.mu.Unlock()
			return nil, fmt.Errorf("sequence %d stepped after Close", i)
		}
		own[i] = hs.Sequence
	}
	d.mu.Unlock()
	return d.m.StepOutputs(ctx, own, tokens, all)
}

// The engine generates through any model.Decoder: over a decoder whose
// sequences live apart from the model (as on a GPU), with the prefix cache
// and speculative decoding on, replies, cached tokens and speculation
// counts are exactly those of the engine on the model itself, and every
// sequence is closed once its request ends.
func TestEngineOverDecoder(t *testing.T) {
	tok := trainTokenizer(t, 300)
	m := mtpModel(t, "tiny", tok, 11, 2)
	opts := Options{Speculative: 2, MaxBatch: 2}
	plain := startEngine(t, m, tok, opts)
	d := &hostDecoder{Decoder: m.Decoder(), m: m, open: map[*hostSequence]bool{}}
	seam, err := newEngine(d, m, tok, opts, func() {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { seam.Close() })
	host := "You are a helpful live-stream host. Answer briefly."
	var drafted int
	for i, q := range []string{"How much is the red jacket?", "Is there free shipping?", "How much is the red jacket?"} {
		req := Request{Messages: question(host, q), MaxTokens: 12, Sampling: greedy()}
		want, err := plain.Generate(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := seam.Generate(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != want.Text || got.Usage.CachedTokens != want.Usage.CachedTokens || got.Usage.Speculation != want.Usage.Speculation {
			t.Errorf("request %d: over the decoder %q (%d cached, %+v), on the model %q (%d cached, %+v)", i,
				got.Text, got.Usage.CachedTokens, got.Usage.Speculation, want.Text, want.Usage.CachedTokens, want.Usage.Speculation)
		}
		drafted += got.Usage.Speculation.Drafted
		if i > 0 && got.Usage.CachedTokens == 0 {
			t.Errorf("request %d restored nothing from the prefix cache", i)
		}
	}
	if drafted == 0 {
		t.Error("no request drafted tokens")
	}
	if n := len(d.open); n != 0 {
		t.Errorf("%d sequences left open", n)
	}
}

// TestGPUEngine serves through the CUDA runner as a deployment does, with
// LIVEHAT_BACKEND=cuda set (model/cuda/devicecheck.sh sets it on a GPU
// machine): Load builds the runner, and replies, prefix-cache hits and
// speculative decoding on it match the same engine on the CPU; requests
// batched together all finish.
func TestGPUEngine(t *testing.T) {
	if os.Getenv("LIVEHAT_BACKEND") != "cuda" {
		t.Skip("LIVEHAT_BACKEND=cuda is not set")
	}
	tok := trainTokenizer(t, 300)
	m := mtpModel(t, "tiny", tok, 11, 2)
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := tok.Save(dir); err != nil {
		t.Fatal(err)
	}
	opts := Options{Speculative: 2, MaxBatch: 4}
	gpu, err := Load(dir, opts)
	if err != nil {
		t.Fatalf("LIVEHAT_BACKEND=cuda: %v", err)
	}
	defer gpu.Close()
	seq := gpu.dec.NewSequence()
	if _, ok := seq.(*cuda.Sequence); !ok {
		t.Fatalf("LIVEHAT_BACKEND=cuda steps %T sequences", seq)
	}
	seq.(io.Closer).Close()
	opts.Backend = "cpu"
	cpu, err := Load(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()

	host := "You are a helpful live-stream host. Answer briefly."
	questions := []string{"How much is the red jacket?", "Is there free shipping?", "How much is the red jacket?", "尺码有哪些？"}
	for i, q := range questions {
		req := Request{Messages: question(host, q), MaxTokens: 16, Sampling: greedy()}
		want, err := cpu.Generate(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := gpu.Generate(context.Background(), req, nil)
		if err != nil {
			t.Fatalf("request %d on the GPU: %v", i, err)
		}
		t.Logf("request %d: %d cached, %+v", i, got.Usage.CachedTokens, got.Usage.Speculation)
		if got.Text != want.Text || got.Usage.CachedTokens != want.Usage.CachedTokens {
			t.Errorf("request %d: GPU %q (%d cached), CPU %q (%d cached)", i, got.Text, got.Usage.CachedTokens, want.Text, want.Usage.CachedTokens)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(questions))
	for i, q := range questions {
		wg.Go(func() {
			_, errs[i] = gpu.Generate(context.Background(), Request{Messages: question(host, q), MaxTokens: 24, Sampling: greedy()}, nil)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Errorf("batched requests on the GPU: %v", err)
	}
	if st := gpu.Stats(); st.MaxStepSequences < 2 {
		t.Errorf("the GPU engine never batched requests: %+v", st)
	}
}
