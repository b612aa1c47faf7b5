package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/sample"
)

// request is one Generate call as the scheduler sees it. Its fields belong
// to the scheduler goroutine, except the delta queue (under mu) and the
// result, which the caller reads after done is closed.
type request struct {
	ctx       context.Context
	prompt    []int
	history   []int // prompt and generated tokens, for the sampler's penalties
	maxTokens int
	ignoreEOS bool
	sampler   *sample.Sampler
	reply     *replyText
	guard     *callGuard // nil unless the request is constrained

	seq       model.DecoderSequence // nil until the request starts reading its prompt
	fed       int                   // prompt tokens in seq
	generated int
	next      int // sampled token to feed in the next step
	// hidden is the trunk's hidden state at the last token in seq (the one
	// that predicted next), which the MTP heads draft from; nil until the
	// prompt is read.
	hidden []float32
	// drafts are the tokens drafted after next for this step, and
	// draftDists the distributions they were drawn from.
	drafts     []int
	draftDists []sample.Dist
	usage      Usage
	submitted  time.Time
	since      time.Time // Request.Since: the waiting line's order
	admitted   time.Time
	firstTok   time.Time
	finished   bool

	mu      sync.Mutex
	pending []Delta
	notify  chan struct{} // capacity 1: deltas are pending
	done    chan struct{} // closed with result and err set
	result  Result
	err     error
}

func (r *request) addDeltas(ds []Delta) {
	if len(ds) == 0 {
		return
	}
	r.mu.Lock()
	r.pending = append(r.pending, ds...)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *request) takeDeltas() []Delta {
	r.mu.Lock()
	defer r.mu.Unlock()
	ds := r.pending
	r.pending = nil
	return ds
}

func (r *request) prefilling() bool { return r.fed < len(r.prompt) }

// finish ends the request: the held-back text is flushed, the result is
// assembled and the caller is woken. Later calls do nothing.
func (r *request) finish(reason string, err error) {
	if r.finished {
		return
	}
	r.finished = true
	now := time.Now()
	r.addDeltas(r.reply.finish())
	r.reply.result(&r.result)
	if reason == FinishStop && len(r.result.ToolCalls) > 0 {
		reason = FinishToolCalls
	}
	r.result.FinishReason = reason
	u := r.usage
	u.PromptTokens = len(r.prompt)
	u.CompletionTokens = r.generated
	switch {
	case r.admitted.IsZero():
		u.Queued = now.Sub(r.submitted)
	case r.firstTok.IsZero():
		u.Queued = r.admitted.Sub(r.submitted)
		u.Prefill = now.Sub(r.admitted)
	default:
		u.Queued = r.admitted.Sub(r.submitted)
		u.Prefill = r.firstTok.Sub(r.admitted)
		u.Decode = now.Sub(r.firstTok)
	}
	r.result.Usage = u
	// A GPU runner's sequence holds device memory until it is closed; a
	// CPU sequence is left to the garbage collector.
	if c, ok := r.seq.(io.Closer); ok {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("engine: release the sequence: %w", cerr)
		}
	}
	r.err = err
	close(r.done)
}

// cancelled ends the request if its context is done and reports whether it
// did.
func (r *request) cancelled() bool {
	if r.ctx.Err() == nil {
		return false
	}
	r.finish(FinishCancelled, context.Cause(r.ctx))
	return true
}

// run is the scheduler: it owns every request from submission to finish.
// Each round it takes in new requests, drops cancelled ones, admits waiting
// ones up to MaxBatch, and runs one model step in which every decoding
// request advances one token and joining requests read a share of the
// prefill budget, oldest first.
func (e *Engine) run() {
	defer close(e.stopped)
	var waiting, active []*request
	for {
		if len(waiting) == 0 && len(active) == 0 {
			select {
			case r := <-e.submit:
				waiting = append(waiting, r)
			case <-e.quit:
				return
			}
		}
	drain:
		for {
			select {
			case r := <-e.submit:
				waiting = append(waiting, r)
			case <-e.quit:
				e.closeAll(waiting, active)
				return
			default:
				break drain
			}
		}
		waiting = slices.DeleteFunc(waiting, (*request).cancelled)
		active = slices.DeleteFunc(active, (*request).cancelled)
		waiting, active = admit(waiting, active, e.opts.MaxBatch, time.Now())
		e.setQueue(len(active), len(waiting))
		if len(active) == 0 {
			continue
		}
		began := time.Now()
		err := e.step(active)
		e.statsMu.Lock()
		e.stats.Busy += time.Since(began)
		e.statsMu.Unlock()
		if err != nil {
			if e.stepCtx.Err() != nil {
				e.closeAll(waiting, active)
				return
			}
			for _, r := range active {
				r.finish(FinishStop, err)
			}
			active = active[:0]
		}
		active = slices.DeleteFunc(active, func(r *request) bool { return r.finished })
		e.setQueue(len(active), len(waiting))
	}
}

// admit moves waiting requests into the batch until it holds maxBatch,
// earliest since first (ties in arrival order), and returns both lists.
func admit(waiting, active []*request, maxBatch int, now time.Time) (stillWaiting, batch []*request) {
	if len(active) < maxBatch && len(waiting) > 1 {
		slices.SortStableFunc(waiting, func(a, b *request) int { return a.since.Compare(b.since) })
	}
	for len(active) < maxBatch && len(waiting) > 0 {
		waiting[0].admitted = now
		active = append(active, waiting[0])
		waiting = waiting[1:]
	}
	return waiting, active
}

func (e *Engine) setQueue(active, waiting int) {
	e.statsMu.Lock()
	e.stats.Active, e.stats.Waiting = active, waiting
	e.statsMu.Unlock()
}

func (e *Engine) closeAll(lists ...[]*request) {
	for _, l := range lists {
		for _, r := range l {
			r.finish(FinishCancelled, ErrClosed)
		}
	}
}

// start gives a request its sequence when it first reads its prompt,
// restoring the longest cached prefix of the prompt.
func (e *Engine) start(r *request) error {
	r.seq = e.dec.NewSequence()
	if e.cache == nil {
		return nil
	}
	n, err := e.cache.Restore(r.seq, r.prompt)
	if err != nil {
		return fmt.Errorf("engine: prefix cache: %w", err)
	}
	r.fed = n
	r.usage.CachedTokens = n
	return nil
}

// awaitsShared reports whether an older request is still computing a
// prefix that r's prompt shares: r then starts once that prefix is in the
// cache instead of computing it a second time (a live room's viewers ask at
// once, all behind the same harness prefix).
func (e *Engine) awaitsShared(r *request, older []*request) bool {
	if e.cache == nil {
		return false
	}
	for _, q := range older {
		if q.seq != nil && q.prefilling() && commonPrefix(q.prompt, r.prompt) > q.fed {
			return true
		}
	}
	return false
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// step runs one model step over the active requests and advances each by
// its result. With speculative decoding, each decoding request first drafts
// tokens with the MTP heads and feeds them after its next token, and the
// step's logits at those positions verify them.
func (e *Engine) step(active []*request) error {
	seqs := make([]model.DecoderSequence, 0, len(active))
	tokens := make([][]int, 0, len(active))
	stepped := make([]*request, 0, len(active))
	budget := e.opts.PrefillChunk
	for i, r := range active {
		r.drafts, r.draftDists = r.drafts[:0], r.draftDists[:0]
		if r.prefilling() {
			if budget == 0 {
				continue
			}
			if r.seq == nil {
				if e.awaitsShared(r, active[:i]) {
					continue
				}
				if err := e.start(r); err != nil {
					r.finish(FinishStop, err)
					continue
				}
			}
			n := min(budget, len(r.prompt)-r.fed)
			budget -= n
			tokens = append(tokens, r.prompt[r.fed:r.fed+n])
		} else {
			tokens = append(tokens, []int{r.next})
		}
		seqs = append(seqs, r.seq)
		stepped = append(stepped, r)
	}
	if len(seqs) == 0 {
		return nil
	}
	if err := e.draft(stepped); err != nil {
		return err
	}
	all := make([]bool, len(stepped))
	for i, r := range stepped {
		if len(r.drafts) > 0 {
			tokens[i] = append(tokens[i], r.drafts...)
			all[i] = true
		}
	}
	e.statsMu.Lock()
	e.stats.Steps++
	e.stats.StepSequences += int64(len(seqs))
	e.stats.MaxStepSequences = max(e.stats.MaxStepSequences, len(seqs))
	e.statsMu.Unlock()
	// The step stops early when every request in it is cancelled (a long
	// prefill chunk of a viewer who left), not only when the engine closes.
	ctx, abandon := context.WithCancel(e.stepCtx)
	defer abandon()
	var left atomic.Int64
	left.Store(int64(len(stepped)))
	for _, r := range stepped {
		stop := context.AfterFunc(r.ctx, func() {
			if left.Add(-1) == 0 {
				abandon()
			}
		})
		defer stop()
	}
	starts := make([]int, len(seqs))
	for i, s := range seqs {
		starts[i] = s.Len()
	}
	out, err := e.dec.StepOutputs(ctx, seqs, tokens, all)
	if err != nil {
		switch {
		case e.stepCtx.Err() != nil:
			return ErrClosed
		case ctx.Err() != nil:
			// The sequences are as they were; the next round finishes
			// the cancelled requests.
			return nil
		}
		return fmt.Errorf("engine: model step: %w", err)
	}
	for i, r := range stepped {
		if r.prefilling() {
			r.fed += len(tokens[i])
			if e.cache != nil {
				// Storing each chunk lets requests admitted meanwhile
				// reuse the part of a shared prefix already computed.
				if err := e.cache.Store(r.seq); err != nil {
					r.finish(FinishStop, fmt.Errorf("engine: prefix cache: %w", err))
					continue
				}
			}
			if r.prefilling() {
				continue
			}
		}
		if len(r.drafts) > 0 {
			e.verify(r, out[i], starts[i])
			continue
		}
		r.hidden = out[i].Hidden
		e.advance(r, out[i].Logits)
	}
	return nil
}

// draftLimit is how many tokens r may draft this step: the engine's
// setting, cut so that the verified tokens fit the context and do not run
// past MaxTokens.
func (e *Engine) draftLimit(r *request) int {
	if e.opts.Speculative == 0 || r.prefilling() || r.hidden == nil {
		return 0
	}
	k := min(e.opts.Speculative, e.dec.MaxContext()-r.seq.Len()-1)
	if r.maxTokens > 0 {
		k = min(k, r.maxTokens-r.generated-1)
	}
	return max(k, 0)
}

// draft lets the MTP heads propose each decoding request's drafts, head by
// head over all drafting requests at once so that a head's matrices are
// read once per step. A draft is drawn from the head's distribution under
// the request's own sampler (its most likely token when greedy) and that
// distribution is kept for verification.
func (e *Engine) draft(stepped []*request) error {
	var rs []*request
	var limits []int
	for _, r := range stepped {
		if k := e.draftLimit(r); k > 0 {
			rs = append(rs, r)
			limits = append(limits, k)
		}
	}
	H, V := e.cfg.HiddenSize, e.cfg.VocabSize
	hidden := make([][]float32, len(rs))
	for i, r := range rs {
		hidden[i] = r.hidden
	}
	history := make([][]int, len(rs))
	for d := 0; len(rs) > 0; d++ {
		var rows []int
		for i := range rs {
			if limits[i] > d {
				rows = append(rows, i)
			}
		}
		if len(rows) == 0 {
			return nil
		}
		in := make([]float32, 0, len(rows)*H)
		last := make([]int, len(rows))
		group := make([]*request, len(rows))
		for j, i := range rows {
			r := rs[i]
			in = append(in, hidden[i]...)
			last[j] = r.next
			if d > 0 {
				last[j] = r.drafts[d-1]
			}
			group[j] = r
		}
		next, logits, err := e.headDraft(d, group, in, last)
		if err != nil {
			return fmt.Errorf("engine: draft: %w", err)
		}
		for j, i := range rows {
			r := rs[i]
			hidden[i] = next[j*H : (j+1)*H]
			if d == 0 {
				// The history already ends with next; clipped, so that
				// appending drafts copies it.
				history[i] = slices.Clip(r.history)
			}
			q, err := r.sampler.Dist(logits[j*V:(j+1)*V], history[i], nil)
			if err != nil {
				// A head that yields no usable draft only costs this
				// request its speculation for the step.
				limits[i] = d
				continue
			}
			tok := r.sampler.Draw(q)
			r.drafts = append(r.drafts, tok)
			r.draftDists = append(r.draftDists, q)
			history[i] = append(history[i], tok)
		}
	}
	return nil
}

// verify advances a request that fed its next token and drafts: position
// by position, the drafted token stands or is replaced under the
// speculative-sampling rule (for greedy sampling: it stands when it is the
// model's own choice), and each token chosen goes through the reply, stop
// strings and the tool-call constraint exactly as in plain decoding, so a
// draft inside a constrained call is checked by the constraint. The first
// replaced draft ends the step, and the cache of the positions after it is
// dropped. start is the sequence's length before the step.
func (e *Engine) verify(r *request, out model.StepOutput, start int) {
	V, H := e.cfg.VocabSize, e.cfg.HiddenSize
	// The counts are updated before each token goes out, since the token
	// that finishes the request also freezes its Usage.
	e.count(r, model.SpecStats{Steps: 1, Drafted: len(r.drafts)})
	accepted := 0
	for j := 0; j <= len(r.drafts) && !r.finished; j++ {
		var mask []uint64
		if r.guard != nil {
			mask = r.guard.allowed()
		}
		logits := out.Logits[j*V : (j+1)*V]
		if j == len(r.drafts) {
			e.advanceAt(r, logits, start+1+j)
			break
		}
		p, err := r.sampler.Dist(logits, r.history, mask)
		if err != nil {
			r.finish(FinishStop, fmt.Errorf("engine: sample: %w", err))
			break
		}
		id, ok := r.sampler.Verify(p, r.draftDists[j], r.drafts[j])
		if ok {
			accepted++
			e.count(r, model.SpecStats{Accepted: 1})
		}
		e.emit(r, id, start+1+j)
		if !ok {
			break
		}
	}
	if r.finished {
		return
	}
	if err := r.seq.Truncate(start + 1 + accepted); err != nil {
		r.finish(FinishStop, fmt.Errorf("engine: roll back drafts: %w", err))
		return
	}
	r.hidden = out.Hidden[accepted*H : (accepted+1)*H]
}

// count adds speculation counts to the request's usage and the engine's
// stats.
func (e *Engine) count(r *request, st model.SpecStats) {
	r.usage.Speculation = r.usage.Speculation.Add(st)
	e.statsMu.Lock()
	e.stats.Speculation = e.stats.Speculation.Add(st)
	e.statsMu.Unlock()
}

// advance samples the request's next token from logits and passes it
// through the reply's text, finishing the request when it is complete.
func (e *Engine) advance(r *request, logits []float32) {
	e.advanceAt(r, logits, r.seq.Len())
}

// advanceAt is advance for a sequence whose first seqLen tokens are the
// ones the logits follow.
func (e *Engine) advanceAt(r *request, logits []float32, seqLen int) {
	var mask []uint64
	if r.guard != nil {
		mask = r.guard.allowed()
	}
	id, err := r.sampler.Sample(logits, r.history, mask)
	if err != nil {
		r.finish(FinishStop, fmt.Errorf("engine: sample: %w", err))
		return
	}
	e.emit(r, id, seqLen)
}

// emit appends a chosen token to the reply, finishing the request when it
// is complete; seqLen is the number of sequence tokens before it.
func (e *Engine) emit(r *request, id, seqLen int) {
	if r.generated == 0 {
		r.firstTok = time.Now()
	}
	r.generated++
	r.history = append(r.history, id)
	if e.eos[id] && !r.ignoreEOS {
		e.complete(r, FinishStop)
		return
	}
	deltas, stopped := r.reply.pushToken(id)
	r.addDeltas(deltas)
	if r.guard != nil {
		if err := r.guard.accept(id, r.reply.raw, r.reply.contentStart()); err != nil {
			r.finish(FinishStop, fmt.Errorf("engine: %w", err))
			return
		}
	}
	switch {
	case stopped:
		e.complete(r, FinishStop)
	case r.maxTokens > 0 && r.generated >= r.maxTokens,
		seqLen >= e.dec.MaxContext():
		e.complete(r, FinishLength)
	default:
		r.next = id
	}
}

// complete finishes a request that ended normally. Its reply's tokens go
// into the prefix cache with the prompt: the next turn of the conversation
// repeats them, when its prompt renders this reply as the model wrote it.
func (e *Engine) complete(r *request, reason string) {
	var err error
	if e.cache != nil {
		if serr := e.cache.Store(r.seq); serr != nil {
			err = fmt.Errorf("engine: prefix cache: %w", serr)
		}
	}
	r.finish(reason, err)
}
