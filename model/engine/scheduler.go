package engine

import (
	"context"
	"fmt"
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

	seq       *model.Sequence // nil until the request starts reading its prompt
	fed       int             // prompt tokens in seq
	generated int
	next      int // sampled token to feed in the next step
	usage     Usage
	submitted time.Time
	admitted  time.Time
	firstTok  time.Time
	finished  bool

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
		for len(active) < e.opts.MaxBatch && len(waiting) > 0 {
			waiting[0].admitted = time.Now()
			active = append(active, waiting[0])
			waiting = waiting[1:]
		}
		e.setQueue(len(active), len(waiting))
		if len(active) == 0 {
			continue
		}
		if err := e.step(active); err != nil {
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
	r.seq = e.model.NewSequence()
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
// its result.
func (e *Engine) step(active []*request) error {
	seqs := make([]*model.Sequence, 0, len(active))
	tokens := make([][]int, 0, len(active))
	stepped := make([]*request, 0, len(active))
	budget := e.opts.PrefillChunk
	for i, r := range active {
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
	logits, err := e.model.Step(ctx, seqs, tokens)
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
				e.cache.Store(r.seq)
			}
			if r.prefilling() {
				continue
			}
		}
		e.advance(r, logits[i])
	}
	return nil
}

// advance samples the request's next token from logits and passes it
// through the reply's text, finishing the request when it is complete.
func (e *Engine) advance(r *request, logits []float32) {
	var mask []uint64
	if r.guard != nil {
		mask = r.guard.allowed()
	}
	id, err := r.sampler.Sample(logits, r.history, mask)
	if err != nil {
		r.finish(FinishStop, fmt.Errorf("engine: sample: %w", err))
		return
	}
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
		r.seq.Len() >= e.model.MaxContext():
		e.complete(r, FinishLength)
	default:
		r.next = id
	}
}

// complete finishes a request that ended normally. Its reply's tokens go
// into the prefix cache with the prompt: the next turn of the conversation
// repeats them, when its prompt renders this reply as the model wrote it.
func (e *Engine) complete(r *request, reason string) {
	if e.cache != nil {
		e.cache.Store(r.seq)
	}
	r.finish(reason, nil)
}
