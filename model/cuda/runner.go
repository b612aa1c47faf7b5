package cuda

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/cuda/internal/cublas"
	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
)

// DefaultMaxRows is the default bound on the tokens one device pass
// computes; longer prompts are read in chunks of this size.
const DefaultMaxRows = 512

// RunnerOptions configure NewRunner.
type RunnerOptions struct {
	// MaxRows bounds the tokens of one device pass (the scratch buffers
	// and the logits buffer are sized for it); 0 means DefaultMaxRows.
	MaxRows int
	// NoGraphs runs decode steps as individual launches instead of
	// replaying a captured CUDA graph.
	NoGraphs bool
}

// Runner runs a Qwen2-family model entirely on the GPU. Its weights are
// uploaded once by NewRunner; each Sequence keeps its KV cache in device
// memory. A Runner is safe for concurrent use; steps are serialised.
type Runner struct {
	x          executor
	host       *model.Model // the weights on the host, for Decoder's MTP heads and prefix cache
	cfg        model.Config
	maxContext int
	maxRows    int
	useGraphs  bool

	embed, lmHead matrix
	norm          driver.Ptr
	layers        []layer
	buf           buffers
	weightBytes   int64
	owned         []driver.Ptr

	mu     sync.Mutex
	graphs map[[2]int]graph // decode graphs by (rows, outputs)
	nextID uint64
	closed bool
}

// matrix is a weight in device memory, rows×cols, float32 or bfloat16.
type matrix struct {
	ptr        driver.Ptr
	rows, cols int
	bf16       bool
}

// layer is one decoder block's device weights; absent biases and norms
// are 0.
type layer struct {
	attnNorm, mlpNorm          driver.Ptr
	q, k, v, o, gate, up, down matrix
	qBias, kBias, vBias, oBias driver.Ptr
	qNorm, kNorm               driver.Ptr
}

// buffers are the scratch activations of one pass, sized for maxRows.
type buffers struct {
	x, h, q, k, v, att, gate, up, hidden, final, logits driver.Ptr
	partial                                             driver.Ptr // split attention's shares (decode passes)
	act16                                               driver.Ptr // bf16 activations for cuBLAS; 0 without it
	meta                                                driver.Ptr
	layout                                              metaLayout
}

// NewRunner uploads m's weights to the device and allocates the scratch
// buffers of a pass. bfloat16 matrices stay bfloat16 on the device;
// float32 and Q8 matrices are stored as float32 (Q8 dequantized).
func NewRunner(d *Device, m *model.Model, opts RunnerOptions) (*Runner, error) {
	return newRunner(d, m, opts)
}

func newRunner(x executor, m *model.Model, opts RunnerOptions) (*Runner, error) {
	if m == nil {
		return nil, errors.New("cuda: NewRunner without a model")
	}
	c := m.Config
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if opts.MaxRows < 0 {
		return nil, fmt.Errorf("cuda: negative MaxRows %d", opts.MaxRows)
	}
	if opts.MaxRows == 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if _, err := kernels.AttentionLaunch(opts.MaxRows, c.NumHeads, c.NumKVHeads, c.HeadDim); err != nil {
		return nil, fmt.Errorf("cuda: model shape: %w", err)
	}
	if c.HeadDim%2 != 0 {
		return nil, fmt.Errorf("cuda: head width %d is odd; RoPE needs pairs", c.HeadDim)
	}
	for name, v := range map[string]int{"vocabulary": c.VocabSize, "intermediate size": c.IntermediateSize, "hidden size": c.HiddenSize} {
		if err := checkedInt(name, v*opts.MaxRows); err != nil {
			return nil, err
		}
	}
	r := &Runner{
		x: x, host: m, cfg: c, maxContext: m.MaxContext(), maxRows: opts.MaxRows,
		useGraphs: !opts.NoGraphs, graphs: map[[2]int]graph{},
	}
	err := x.do(func() error {
		if err := r.uploadWeights(m); err != nil {
			return err
		}
		return r.allocBuffers()
	})
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// allocOwned allocates device memory the Runner frees on Close.
func (r *Runner) allocOwned(n int64) (driver.Ptr, error) {
	p, err := r.x.alloc(n)
	if err != nil {
		return 0, err
	}
	r.owned = append(r.owned, p)
	return p, nil
}

func (r *Runner) uploadVector(v []float32) (driver.Ptr, error) {
	if v == nil {
		return 0, nil
	}
	p, err := r.allocOwned(int64(4 * len(v)))
	if err != nil {
		return 0, err
	}
	if err := r.x.upload(p, bytesOf(v)); err != nil {
		return 0, err
	}
	r.weightBytes += int64(4 * len(v))
	// The upload reads v asynchronously; wait before v can go.
	return p, r.x.sync()
}

func (r *Runner) uploadMatrix(w *model.Weight) (matrix, error) {
	mt, data, err := hostMatrix(w)
	if err != nil {
		return matrix{}, err
	}
	if mt.ptr, err = r.allocOwned(int64(len(data))); err != nil {
		return matrix{}, err
	}
	if err := r.x.upload(mt.ptr, data); err != nil {
		return matrix{}, err
	}
	r.weightBytes += int64(len(data))
	return mt, r.x.sync()
}

// hostMatrix converts a model weight into its device layout: bfloat16
// stays bfloat16 (exactly: widening and narrowing a bfloat16 value is
// lossless), anything else becomes float32.
func hostMatrix(w *model.Weight) (matrix, []byte, error) {
	if w == nil {
		return matrix{}, nil, errors.New("cuda: missing weight")
	}
	if err := checkedInt("weight size", w.Rows()*w.Cols()); err != nil {
		return matrix{}, nil, err
	}
	f := w.Float32()
	mt := matrix{rows: w.Rows(), cols: w.Cols()}
	if w.DType() == model.BF16 {
		mt.bf16 = true
		h := make([]uint16, len(f))
		for i, v := range f {
			h[i] = uint16(math.Float32bits(v) >> 16)
		}
		return mt, bytesOf(h), nil
	}
	return mt, bytesOf(f), nil
}

func (r *Runner) uploadWeights(m *model.Model) error {
	var err error
	if r.embed, err = r.uploadMatrix(m.Embed); err != nil {
		return fmt.Errorf("cuda: embedding: %w", err)
	}
	r.lmHead = r.embed
	if m.LMHead != m.Embed {
		if r.lmHead, err = r.uploadMatrix(m.LMHead); err != nil {
			return fmt.Errorf("cuda: lm_head: %w", err)
		}
	}
	if r.norm, err = r.uploadVector(m.Norm); err != nil {
		return err
	}
	r.layers = make([]layer, len(m.Layers))
	for i := range m.Layers {
		src, dst := &m.Layers[i], &r.layers[i]
		for _, w := range []struct {
			dst *matrix
			src *model.Weight
		}{{&dst.q, src.Q}, {&dst.k, src.K}, {&dst.v, src.V}, {&dst.o, src.O}, {&dst.gate, src.Gate}, {&dst.up, src.Up}, {&dst.down, src.Down}} {
			if *w.dst, err = r.uploadMatrix(w.src); err != nil {
				return fmt.Errorf("cuda: layer %d: %w", i, err)
			}
		}
		for _, v := range []struct {
			dst *driver.Ptr
			src []float32
		}{{&dst.attnNorm, src.AttnNorm}, {&dst.mlpNorm, src.MLPNorm}, {&dst.qBias, src.QBias}, {&dst.kBias, src.KBias},
			{&dst.vBias, src.VBias}, {&dst.oBias, src.OBias}, {&dst.qNorm, src.QNorm}, {&dst.kNorm, src.KNorm}} {
			if *v.dst, err = r.uploadVector(v.src); err != nil {
				return fmt.Errorf("cuda: layer %d: %w", i, err)
			}
		}
	}
	return nil
}

func (r *Runner) allocBuffers() error {
	c, R := r.cfg, int64(r.maxRows)
	qDim, kvDim := int64(c.NumHeads*c.HeadDim), int64(c.NumKVHeads*c.HeadDim)
	H, I := int64(c.HiddenSize), int64(c.IntermediateSize)
	b := &r.buf
	for _, s := range []struct {
		p *driver.Ptr
		n int64
	}{{&b.x, R * H}, {&b.h, R * H}, {&b.q, R * qDim}, {&b.k, R * kvDim}, {&b.v, R * kvDim}, {&b.att, R * qDim},
		{&b.gate, R * I}, {&b.up, R * I}, {&b.hidden, R * H}, {&b.final, R * H}, {&b.logits, R * int64(c.VocabSize)},
		{&b.partial, int64(min(r.maxRows, kernels.LinearSmallMaxN)) * int64(c.NumHeads) * kernels.AttentionSplits * int64(c.HeadDim+2)}} {
		var err error
		if *s.p, err = r.allocOwned(4 * s.n); err != nil {
			return fmt.Errorf("cuda: scratch buffers for %d rows: %w", R, err)
		}
	}
	if r.x.hasGemm() {
		var err error
		if b.act16, err = r.allocOwned(2 * R * max(H, qDim, I)); err != nil {
			return err
		}
	}
	b.layout = newMetaLayout(r.maxRows)
	var err error
	b.meta, err = r.allocOwned(int64(b.layout.size))
	return err
}

// WeightBytes returns the device memory the weights occupy.
func (r *Runner) WeightBytes() int64 { return r.weightBytes }

// Close frees the weights, scratch buffers and graphs. Sequences keep
// their own KV caches until their Close.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	return r.x.do(func() error {
		var errs []error
		for _, g := range r.graphs {
			errs = append(errs, r.x.destroy(g))
		}
		for _, p := range r.owned {
			errs = append(errs, r.x.free(p))
		}
		r.owned = nil
		return errors.Join(errs...)
	})
}

// metaLayout places a pass's per-row metadata in one device buffer, so a
// single copy sends it and a captured graph finds it at fixed addresses.
type metaLayout struct {
	rows                                  int
	tokens, positions, outRows, sampled   int // int32 arrays
	kcache, vcache, layerStride, counters int // 8-byte arrays
	size                                  int
}

func newMetaLayout(rows int) metaLayout {
	l := metaLayout{rows: rows}
	off := 0
	next := func(elem int) int {
		off = (off + 7) &^ 7
		at := off
		off += elem * rows
		return at
	}
	l.tokens, l.positions, l.outRows, l.sampled = next(4), next(4), next(4), next(4)
	l.kcache, l.vcache, l.layerStride, l.counters = next(8), next(8), next(8), next(8)
	l.size = (off + 7) &^ 7
	return l
}

// stepMeta is the host copy of a pass's metadata.
type stepMeta struct {
	tokens, positions []int32  // per row
	kcache, vcache    []uint64 // per row: the sequence's layer-0 caches
	layerStride       []int64  // per row: floats between layers
	outRows           []int32  // rows whose logits the pass returns
	counters          []uint64 // per output row: sampling counter
}

// encode lays m out as l describes.
func (l metaLayout) encode(m stepMeta) ([]byte, error) {
	if len(m.tokens) > l.rows || len(m.outRows) > l.rows {
		return nil, fmt.Errorf("cuda: pass of %d rows (%d outputs) exceeds the %d-row buffers", len(m.tokens), len(m.outRows), l.rows)
	}
	b := make([]byte, l.size)
	le := binary.LittleEndian
	for i := range m.tokens {
		le.PutUint32(b[l.tokens+4*i:], uint32(m.tokens[i]))
		le.PutUint32(b[l.positions+4*i:], uint32(m.positions[i]))
		le.PutUint64(b[l.kcache+8*i:], m.kcache[i])
		le.PutUint64(b[l.vcache+8*i:], m.vcache[i])
		le.PutUint64(b[l.layerStride+8*i:], uint64(m.layerStride[i]))
	}
	for i := range m.outRows {
		le.PutUint32(b[l.outRows+4*i:], uint32(m.outRows[i]))
		le.PutUint64(b[l.counters+8*i:], m.counters[i])
	}
	return b, nil
}

// Sequence is one generation stream on a Runner: its tokens and its KV
// cache in device memory, which grows as the sequence does. Close it to
// free the cache.
type Sequence struct {
	r        *Runner
	id       uint64
	tokens   []int
	k, v     driver.Ptr // [layer][capacity][kvDim] float32
	capacity int
	closed   bool
}

// NewSequence returns an empty sequence; its cache is allocated on the
// first step.
func (r *Runner) NewSequence() *Sequence {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	return &Sequence{r: r, id: r.nextID}
}

// Len returns the number of tokens in the sequence.
func (s *Sequence) Len() int {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return len(s.tokens)
}

// Tokens returns a copy of the sequence's tokens.
func (s *Sequence) Tokens() []int {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return slices.Clone(s.tokens)
}

// Truncate drops every token from position n on (the cache entries past n
// are simply overwritten later).
func (s *Sequence) Truncate(n int) error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if n < 0 || n > len(s.tokens) {
		return fmt.Errorf("cuda: truncate to %d: sequence has %d tokens", n, len(s.tokens))
	}
	s.tokens = s.tokens[:n]
	return nil
}

// Close frees the sequence's KV cache; the sequence cannot step again.
func (s *Sequence) Close() error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.k == 0 {
		return nil
	}
	return s.r.x.do(func() error {
		err := errors.Join(s.r.x.free(s.k), s.r.x.free(s.v))
		s.k, s.v, s.capacity = 0, 0, 0
		return err
	})
}

// kvDim is the width of one token's keys (or values) in one layer.
func (r *Runner) kvDim() int { return r.cfg.NumKVHeads * r.cfg.HeadDim }

// growthCapacity is the capacity a cache needing n positions grows to from
// capacity: doubling (at least 16) so growth copies are amortised, never
// beyond the model's context.
func growthCapacity(capacity, n, maxContext int) int {
	return min(max(n, 2*capacity, 16), maxContext)
}

// reserve makes room for n positions in s's cache, copying what it holds.
func (r *Runner) reserve(s *Sequence, n int) error {
	if n <= s.capacity {
		return nil
	}
	newCap := growthCapacity(s.capacity, n, r.maxContext)
	L, kv := int64(r.cfg.NumLayers), int64(r.kvDim())
	bytes := 4 * L * int64(newCap) * kv
	k, err := r.x.alloc(bytes)
	if err != nil {
		return fmt.Errorf("cuda: KV cache of %d positions: %w", newCap, err)
	}
	v, err := r.x.alloc(bytes)
	if err != nil {
		r.x.free(k)
		return fmt.Errorf("cuda: KV cache of %d positions: %w", newCap, err)
	}
	if used := int64(len(s.tokens)); used > 0 {
		for l := range L {
			dst, src := 4*l*int64(newCap)*kv, 4*l*int64(s.capacity)*kv
			if err := errors.Join(r.x.copyDevice(k.Add(dst), s.k.Add(src), 4*used*kv), r.x.copyDevice(v.Add(dst), s.v.Add(src), 4*used*kv)); err != nil {
				r.x.free(k)
				r.x.free(v)
				return err
			}
		}
	}
	if s.k != 0 {
		if err := errors.Join(r.x.free(s.k), r.x.free(s.v)); err != nil {
			return err
		}
	}
	s.k, s.v, s.capacity = k, v, newCap
	return nil
}

// Sampling chooses how Next picks tokens: Temperature 0 takes the most
// likely token; otherwise tokens are drawn from softmax(logits /
// Temperature) with noise determined by Seed and the sequence length, so
// the same seed reproduces the same text (and two sequences of one step at
// the same length share their noise: give requests their own seeds by
// stepping them in separate Next calls when that matters).
type Sampling struct {
	Temperature float32
	Seed        uint64
}

// output is what a pass returns.
type output int

const (
	outNone   output = iota // only the KV cache is wanted (prompt chunks)
	outLogits               // logits of each item's last token, or of all its tokens when item.all is set
	outArgmax               // the most likely next token per item
	outSample               // a sampled next token per item
)

// want says what a step returns.
type want struct {
	out output
	// all, when not nil, asks for the results of every token of sequence
	// i where all[i] is set (outLogits only).
	all []bool
	// hidden asks for the hidden states of the rows whose logits are
	// returned: the last layer's output before the final norm.
	hidden   bool
	sampling Sampling
}

// result is one sequence's share of a step's outcome.
type result struct {
	logits, hidden []float32
	pick           int
}

// Forward appends tokens to seq and returns the logits of every token,
// len(tokens)×VocabSize.
func (r *Runner) Forward(ctx context.Context, seq *Sequence, tokens []int) ([]float32, error) {
	res, err := r.run(ctx, []*Sequence{seq}, [][]int{tokens}, want{out: outLogits, all: []bool{true}})
	if err != nil {
		return nil, err
	}
	return res[0].logits, nil
}

// Decode appends one token and returns the logits that predict the next.
func (r *Runner) Decode(ctx context.Context, seq *Sequence, token int) ([]float32, error) {
	res, err := r.run(ctx, []*Sequence{seq}, [][]int{{token}}, want{out: outLogits})
	if err != nil {
		return nil, err
	}
	return res[0].logits, nil
}

// Step appends each sequence's tokens (a prompt chunk or one decoded
// token) in one pass where they fit, and returns the logits of each
// sequence's last token.
func (r *Runner) Step(ctx context.Context, seqs []*Sequence, tokens [][]int) ([][]float32, error) {
	res, err := r.run(ctx, seqs, tokens, want{out: outLogits})
	if err != nil {
		return nil, err
	}
	logits := make([][]float32, len(res))
	for i, o := range res {
		logits[i] = o.logits
	}
	return logits, nil
}

// StepOutputs is model.Model.StepOutputs on the device: each sequence's
// logits and hidden states, of every token where all[i] is set (all may
// be nil), else of its last token.
func (r *Runner) StepOutputs(ctx context.Context, seqs []*Sequence, tokens [][]int, all []bool) ([]model.StepOutput, error) {
	if all != nil && len(all) != len(seqs) {
		return nil, fmt.Errorf("cuda: step of %d sequences with %d flags", len(seqs), len(all))
	}
	res, err := r.run(ctx, seqs, tokens, want{out: outLogits, all: all, hidden: true})
	if err != nil {
		return nil, err
	}
	out := make([]model.StepOutput, len(res))
	for i, o := range res {
		out[i] = model.StepOutput{Logits: o.logits, Hidden: o.hidden}
	}
	return out, nil
}

// Next appends each sequence's tokens and picks each sequence's next
// token on the device, copying back one integer per sequence instead of
// a vocabulary of logits: the decode loop of generation.
func (r *Runner) Next(ctx context.Context, seqs []*Sequence, tokens [][]int, s Sampling) ([]int, error) {
	w := want{out: outArgmax, sampling: s}
	switch {
	case s.Temperature < 0 || math.IsNaN(float64(s.Temperature)) || math.IsInf(float64(s.Temperature), 0):
		return nil, fmt.Errorf("cuda: sampling temperature %v", s.Temperature)
	case s.Temperature > 0:
		w.out = outSample
	}
	res, err := r.run(ctx, seqs, tokens, w)
	if err != nil {
		return nil, err
	}
	picks := make([]int, len(res))
	for i, o := range res {
		picks[i] = o.pick
	}
	return picks, nil
}

// item is one sequence's part of a pass.
type item struct {
	seq    *Sequence
	tokens []int
	start  int
	all    bool // results for every token, not only the last
}

// run validates a step and runs it as one pass when it fits the buffers,
// or sequence by sequence in chunks of maxRows otherwise. On error every
// sequence is left as it was.
func (r *Runner) run(ctx context.Context, seqs []*Sequence, tokens [][]int, w want) ([]result, error) {
	if len(seqs) == 0 || len(seqs) != len(tokens) {
		return nil, fmt.Errorf("cuda: step of %d sequences with %d token lists", len(seqs), len(tokens))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("cuda: runner is closed")
	}
	items := make([]item, len(seqs))
	rows := 0
	for i, sq := range seqs {
		switch {
		case sq == nil || sq.r != r:
			return nil, fmt.Errorf("cuda: sequence %d does not belong to this runner", i)
		case sq.closed:
			return nil, fmt.Errorf("cuda: sequence %d is closed", i)
		case len(tokens[i]) == 0:
			return nil, fmt.Errorf("cuda: sequence %d: no tokens", i)
		}
		for j, t := range tokens[i] {
			if t < 0 || t >= r.cfg.VocabSize {
				return nil, fmt.Errorf("cuda: sequence %d: token %d at %d is outside the vocabulary of %d", i, t, j, r.cfg.VocabSize)
			}
		}
		if n := len(sq.tokens) + len(tokens[i]); n > r.maxContext {
			return nil, fmt.Errorf("%w: sequence %d would hold %d tokens, the model accepts %d", model.ErrContextTooLong, i, n, r.maxContext)
		}
		items[i] = item{seq: sq, tokens: tokens[i], start: len(sq.tokens), all: w.all != nil && w.all[i]}
		rows += len(tokens[i])
	}
	order := slices.Clone(seqs)
	slices.SortFunc(order, func(a, b *Sequence) int { return cmp.Compare(a.id, b.id) })
	for i := 1; i < len(order); i++ {
		if order[i] == order[i-1] {
			return nil, errors.New("cuda: a sequence appears twice in one step")
		}
	}

	res := make([]result, len(items))
	ok := false
	defer func() {
		if !ok {
			for _, it := range items {
				it.seq.tokens = it.seq.tokens[:it.start]
			}
		}
	}()
	err := r.x.do(func() error {
		if rows <= r.maxRows {
			return r.pass(ctx, items, w, res)
		}
		for i, it := range items {
			for c := 0; c < len(it.tokens); c += r.maxRows {
				end := min(c+r.maxRows, len(it.tokens))
				chunk := w
				if end < len(it.tokens) && !it.all {
					chunk.out = outNone
				}
				part := []item{{seq: it.seq, tokens: it.tokens[c:end], start: it.start + c, all: it.all}}
				var p [1]result
				if err := r.pass(ctx, part, chunk, p[:]); err != nil {
					return err
				}
				res[i].logits = append(res[i].logits, p[0].logits...)
				res[i].hidden = append(res[i].hidden, p[0].hidden...)
				res[i].pick = p[0].pick
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ok = true
	return res, nil
}

// pass computes one device pass over items (at most maxRows rows) and
// appends their tokens to their sequences.
func (r *Runner) pass(ctx context.Context, items []item, w want, res []result) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, it := range items {
		if err := r.reserve(it.seq, it.start+len(it.tokens)); err != nil {
			return err
		}
	}
	var m stepMeta
	decode := true
	for _, it := range items {
		kvStride := int64(it.seq.capacity) * int64(r.kvDim())
		for j, t := range it.tokens {
			m.tokens = append(m.tokens, int32(t))
			m.positions = append(m.positions, int32(it.start+j))
			m.kcache = append(m.kcache, uint64(it.seq.k))
			m.vcache = append(m.vcache, uint64(it.seq.v))
			m.layerStride = append(m.layerStride, kvStride)
			if it.all && w.out != outNone {
				m.outRows = append(m.outRows, int32(len(m.tokens)-1))
				m.counters = append(m.counters, uint64(it.start+j+1))
			}
		}
		if !it.all && w.out != outNone {
			m.outRows = append(m.outRows, int32(len(m.tokens)-1))
			m.counters = append(m.counters, uint64(it.start+len(it.tokens)))
		}
		decode = decode && len(it.tokens) == 1 && !it.all
	}
	meta, err := r.buf.layout.encode(m)
	if err != nil {
		return err
	}
	if err := r.x.upload(r.buf.meta, meta); err != nil {
		return err
	}
	rows, outs := len(m.tokens), len(m.outRows)
	// A decode pass (one token per sequence, last logits) has the same
	// launches whatever the positions and caches, which the kernels read
	// from the metadata; it replays a graph captured once per batch size.
	// Only the small-row kernels run inside, never cuBLAS.
	if r.useGraphs && decode && w.out != outNone && rows <= kernels.LinearSmallMaxN {
		key := [2]int{rows, outs}
		g, ok := r.graphs[key]
		if !ok {
			if g, err = r.x.capture(func() error { return r.enqueue(rows, outs) }); err != nil {
				return fmt.Errorf("cuda: capturing the decode graph: %w", err)
			}
			r.graphs[key] = g
		}
		if err := r.x.replay(g); err != nil {
			return err
		}
	} else if err := r.enqueue(rows, outs); err != nil {
		return err
	}
	if err := r.collect(w, outs, items, res); err != nil {
		return err
	}
	for _, it := range items {
		it.seq.tokens = append(it.seq.tokens, it.tokens...)
	}
	return nil
}

// collect copies a pass's result back: logits (and hidden states), or one
// chosen token per output row after the selection kernel.
func (r *Runner) collect(w want, outs int, items []item, res []result) error {
	V, H := r.cfg.VocabSize, r.cfg.HiddenSize
	l := r.buf.layout
	switch w.out {
	case outNone:
		return r.x.sync()
	case outLogits:
		logits := make([]float32, outs*V)
		if err := r.x.download(bytesOf(logits), r.buf.logits); err != nil {
			return err
		}
		var hidden []float32
		if w.hidden {
			hidden = make([]float32, outs*H)
			if err := r.x.download(bytesOf(hidden), r.buf.hidden); err != nil {
				return err
			}
		}
		next := 0
		for i, it := range items {
			n := 1
			if it.all {
				n = len(it.tokens)
			}
			res[i].logits = logits[next*V : (next+n)*V : (next+n)*V]
			if hidden != nil {
				res[i].hidden = hidden[next*H : (next+n)*H : (next+n)*H]
			}
			next += n
		}
		return nil
	}
	g, err := kernels.Sample(outs, V)
	if err != nil {
		return err
	}
	sampled := r.buf.meta.Add(int64(l.sampled))
	if w.out == outArgmax {
		err = r.x.launch(kernels.Argmax, g, []arg{ptrArg(sampled), ptrArg(r.buf.logits), i32Arg(V)})
	} else {
		err = r.x.launch(kernels.SampleGumbel, g, []arg{ptrArg(sampled), ptrArg(r.buf.logits), i32Arg(V),
			f32Arg(1 / w.sampling.Temperature), u64Arg(w.sampling.Seed), ptrArg(r.buf.meta.Add(int64(l.counters)))})
	}
	if err != nil {
		return err
	}
	host := make([]int32, outs)
	if err := r.x.download(bytesOf(host), sampled); err != nil {
		return err
	}
	for i := range items {
		res[i].pick = int(host[i])
	}
	return nil
}

// enqueue launches the forward pass over rows rows whose metadata is in
// place, ending with the logits of outs rows (none when outs is 0), in the
// blocks of model.Model's step: embed, each decoder layer (attention
// block, then MLP block), output head. It depends on nothing but rows and
// outs, so it can be captured.
func (r *Runner) enqueue(rows, outs int) error {
	p := &launcher{r: r}
	p.embed(rows)
	for li := range r.layers {
		p.decoderLayer(li, rows)
		if len(p.errs) > 0 {
			return fmt.Errorf("cuda: layer %d: %w", li, errors.Join(p.errs...))
		}
	}
	if outs == 0 {
		return nil
	}
	p.outputHead(outs)
	if len(p.errs) > 0 {
		return fmt.Errorf("cuda: output: %w", errors.Join(p.errs...))
	}
	return nil
}

// launcher enqueues the kernels of one pass, collecting launch errors so
// that each block reads as its sequence of operations.
type launcher struct {
	r    *Runner
	errs []error
}

func (p *launcher) launch(id kernels.ID, g kernels.Geometry, gerr error, args ...arg) {
	if gerr != nil {
		p.errs = append(p.errs, gerr)
		return
	}
	if err := p.r.x.launch(id, g, args); err != nil {
		p.errs = append(p.errs, err)
	}
}

func (p *launcher) norm(dst, src, w driver.Ptr, n, width int) {
	g, err := kernels.Norm(n, width)
	p.launch(kernels.RMSNorm, g, err, ptrArg(dst), ptrArg(src), ptrArg(w), i32Arg(width), f32Arg(float32(p.r.cfg.RMSNormEps)))
}

func (p *launcher) bias(x, bv driver.Ptr, n, width int) {
	if bv == 0 {
		return
	}
	g, err := kernels.Elementwise(int64(n) * int64(width))
	p.launch(kernels.AddBias, g, err, ptrArg(x), ptrArg(bv), i64Arg(int64(n)*int64(width)), i32Arg(width))
}

func (p *launcher) linear(y, x driver.Ptr, n int, w matrix) {
	if err := p.r.linear(y, x, n, w); err != nil {
		p.errs = append(p.errs, err)
	}
}

func (p *launcher) elementwise(id kernels.ID, dst, src driver.Ptr, n int) {
	g, err := kernels.Elementwise(int64(n))
	p.launch(id, g, err, ptrArg(dst), ptrArg(src), i64Arg(int64(n)))
}

// embed gathers the embeddings of the pass's tokens into the residual
// stream x.
func (p *launcher) embed(rows int) {
	r, b, l := p.r, &p.r.buf, p.r.buf.layout
	id := kernels.EmbedF32
	if r.embed.bf16 {
		id = kernels.EmbedBF16
	}
	g, err := kernels.PerRow(rows, r.cfg.HiddenSize)
	p.launch(id, g, err, ptrArg(b.x), ptrArg(r.embed.ptr), ptrArg(b.meta.Add(int64(l.tokens))), i32Arg(r.cfg.HiddenSize))
}

// decoderLayer runs layer li over x: x += Attn(x), then x += MLP(x).
func (p *launcher) decoderLayer(li, rows int) {
	p.attentionBlock(li, rows)
	p.mlpBlock(li, rows)
}

// attentionBlock adds layer li's self-attention to x: RMSNorm, the q, k
// and v projections (with their biases and Qwen3's per-head norms), RoPE,
// the new keys and values stored in each sequence's cache, causal
// attention over the cache, and the o projection.
func (p *launcher) attentionBlock(li, rows int) {
	r, b, l, ly := p.r, &p.r.buf, p.r.buf.layout, &p.r.layers[li]
	c := r.cfg
	H, D := c.HiddenSize, c.HeadDim
	qDim, kvDim := c.NumHeads*D, c.NumKVHeads*D
	positions := b.meta.Add(int64(l.positions))
	kc, vc, stride := b.meta.Add(int64(l.kcache)), b.meta.Add(int64(l.vcache)), b.meta.Add(int64(l.layerStride))

	p.norm(b.h, b.x, ly.attnNorm, rows, H)
	p.linear(b.q, b.h, rows, ly.q)
	p.linear(b.k, b.h, rows, ly.k)
	p.linear(b.v, b.h, rows, ly.v)
	p.bias(b.q, ly.qBias, rows, qDim)
	p.bias(b.k, ly.kBias, rows, kvDim)
	p.bias(b.v, ly.vBias, rows, kvDim)
	if ly.qNorm != 0 {
		p.norm(b.q, b.q, ly.qNorm, rows*c.NumHeads, D)
		p.norm(b.k, b.k, ly.kNorm, rows*c.NumKVHeads, D)
	}
	g, err := kernels.Rope(rows, c.NumHeads, D)
	p.launch(kernels.RoPE, g, err, ptrArg(b.q), ptrArg(positions), i32Arg(c.NumHeads), i32Arg(D), f64Arg(c.RopeTheta))
	g, err = kernels.Rope(rows, c.NumKVHeads, D)
	p.launch(kernels.RoPE, g, err, ptrArg(b.k), ptrArg(positions), i32Arg(c.NumKVHeads), i32Arg(D), f64Arg(c.RopeTheta))
	g, err = kernels.PerRow(rows, kvDim)
	p.launch(kernels.KVStore, g, err, ptrArg(b.k), ptrArg(b.v), ptrArg(positions), ptrArg(kc), ptrArg(vc), ptrArg(stride), i32Arg(li), i32Arg(kvDim))
	scale := f32Arg(float32(1 / math.Sqrt(float64(D))))
	if rows <= kernels.LinearSmallMaxN {
		// Few rows: split each (head, row) over several blocks.
		g, err = kernels.AttentionPartialLaunch(rows, c.NumHeads, c.NumKVHeads, D, kernels.AttentionSplits)
		p.launch(kernels.AttentionPartial, g, err, ptrArg(b.partial), ptrArg(b.q), ptrArg(positions), ptrArg(kc), ptrArg(vc), ptrArg(stride),
			i32Arg(li), i32Arg(c.NumHeads), i32Arg(c.NumKVHeads), i32Arg(D), scale)
		g, err = kernels.AttentionCombineLaunch(rows, c.NumHeads, D)
		p.launch(kernels.AttentionCombine, g, err, ptrArg(b.att), ptrArg(b.partial), i32Arg(c.NumHeads), i32Arg(D), i32Arg(kernels.AttentionSplits))
	} else {
		g, err = kernels.AttentionLaunch(rows, c.NumHeads, c.NumKVHeads, D)
		p.launch(kernels.Attention, g, err, ptrArg(b.att), ptrArg(b.q), ptrArg(positions), ptrArg(kc), ptrArg(vc), ptrArg(stride),
			i32Arg(li), i32Arg(c.NumHeads), i32Arg(c.NumKVHeads), i32Arg(D), scale)
	}
	p.linear(b.h, b.att, rows, ly.o)
	p.bias(b.h, ly.oBias, rows, H)
	p.elementwise(kernels.ResidualAdd, b.x, b.h, rows*H)
}

// mlpBlock adds layer li's SwiGLU MLP to x: RMSNorm, the gate and up
// projections, silu(gate)·up, and the down projection.
func (p *launcher) mlpBlock(li, rows int) {
	b, ly, c := &p.r.buf, &p.r.layers[li], p.r.cfg
	p.norm(b.h, b.x, ly.mlpNorm, rows, c.HiddenSize)
	p.linear(b.gate, b.h, rows, ly.gate)
	p.linear(b.up, b.h, rows, ly.up)
	p.elementwise(kernels.SwiGLU, b.gate, b.up, rows*c.IntermediateSize)
	p.linear(b.h, b.gate, rows, ly.down)
	p.elementwise(kernels.ResidualAdd, b.x, b.h, rows*c.HiddenSize)
}

// outputHead gathers the output rows' hidden states, then computes their
// logits: the final RMSNorm and the LM head.
func (p *launcher) outputHead(outs int) {
	r, b, l := p.r, &p.r.buf, p.r.buf.layout
	H := r.cfg.HiddenSize
	g, err := kernels.PerRow(outs, H)
	p.launch(kernels.GatherRows, g, err, ptrArg(b.hidden), ptrArg(b.x), ptrArg(b.meta.Add(int64(l.outRows))), i32Arg(H))
	p.norm(b.final, b.hidden, r.norm, outs, H)
	p.linear(b.logits, b.final, outs, r.lmHead)
}

// linear computes y = x·Wᵀ for n rows: cuBLAS for prompt-sized n where it
// is loaded (bfloat16 weights take bfloat16 activations, as bf16
// inference does everywhere; float32 weights stay float32), the own
// kernels otherwise.
func (r *Runner) linear(y, x driver.Ptr, n int, w matrix) error {
	if n > kernels.LinearSmallMaxN && r.x.hasGemm() {
		a := cublas.Operand{Ptr: uint64(x), Type: cublas.R32F, LD: w.cols}
		bw := cublas.Operand{Ptr: uint64(w.ptr), Type: cublas.R32F, LD: w.cols, Trans: true}
		if w.bf16 {
			g, err := kernels.Elementwise(int64(n) * int64(w.cols))
			if err != nil {
				return err
			}
			if err := r.x.launch(kernels.ToBF16, g, []arg{ptrArg(r.buf.act16), ptrArg(x), i64Arg(int64(n) * int64(w.cols))}); err != nil {
				return err
			}
			a.Ptr, a.Type, bw.Type = uint64(r.buf.act16), cublas.R16BF, cublas.R16BF
		}
		return r.x.gemm(n, w.rows, w.cols, a, bw, y, w.rows)
	}
	id, g, err := kernels.Linear(n, w.rows, w.cols, w.bf16)
	if err != nil {
		return err
	}
	return r.x.launch(id, g, []arg{ptrArg(y), ptrArg(x), ptrArg(w.ptr), i32Arg(n), i32Arg(w.rows), i32Arg(w.cols)})
}
