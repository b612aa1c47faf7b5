package console

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/livehat/livehat/console/store"
)

// Why a job's context ends: the operator stopped it, or the console is
// shutting down (the job is then left interrupted, to be resumed).
var (
	errStopped  = errors.New("stopped by an operator")
	errShutdown = errors.New("the console is shutting down")
)

// jobQueue runs background jobs (training runs, evaluations) in the
// console process, at most a fixed number at once; the others wait in
// submission order for a slot. Every job can be cancelled by its id, and
// close cancels them all and waits for them to return.
type jobQueue struct {
	slots  chan struct{}
	base   context.Context
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	jobs   map[string]*queuedJob
	closed bool
	wg     sync.WaitGroup
}

// queuedJob is a job that is waiting or running: done closes when it
// has returned.
type queuedJob struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

func newJobQueue(parallel int) *jobQueue {
	base, cancel := context.WithCancelCause(context.Background())
	return &jobQueue{slots: make(chan struct{}, max(1, parallel)), base: base, cancel: cancel, jobs: map[string]*queuedJob{}}
}

// submit queues job under id. The job runs once a slot is free; if it is
// cancelled while still waiting it runs anyway with a done context, so it
// can record why it never started. It reports false if id is already
// queued or running, or the queue is closed.
func (q *jobQueue) submit(id string, job func(ctx context.Context)) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, busy := q.jobs[id]; busy || q.closed {
		return false
	}
	ctx, cancel := context.WithCancelCause(q.base)
	j := &queuedJob{cancel: cancel, done: make(chan struct{})}
	q.jobs[id] = j
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		defer func() {
			q.mu.Lock()
			delete(q.jobs, id)
			q.mu.Unlock()
			cancel(nil)
			close(j.done)
		}()
		select {
		case q.slots <- struct{}{}:
			defer func() { <-q.slots }()
		case <-ctx.Done():
		}
		job(ctx)
	}()
	return true
}

// stop cancels the job id and returns a channel that closes once it has
// returned; nil if the job is not queued or running.
func (q *jobQueue) stop(id string) <-chan struct{} {
	q.mu.Lock()
	j, ok := q.jobs[id]
	q.mu.Unlock()
	if !ok {
		return nil
	}
	j.cancel(errStopped)
	return j.done
}

// stopWait stops job id and waits at most limit for it to return (a
// training step or an evaluation item in progress finishes first).
func (q *jobQueue) stopWait(id string, limit time.Duration) {
	done := q.stop(id)
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(limit):
	}
}

// busy reports whether job id is queued or running in this process.
func (q *jobQueue) busy(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.jobs[id]
	return ok
}

// close cancels every job, refuses new ones and waits for them to return.
func (q *jobQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cancel(errShutdown)
	q.wg.Wait()
}

// endState is the state a job ends in, given the error it returned and
// its context.
func endState(ctx context.Context, err error) (state store.JobState, msg string) {
	switch {
	case err == nil:
		return store.JobDone, ""
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errShutdown):
		return store.JobInterrupted, errShutdown.Error()
	case ctx.Err() != nil:
		return store.JobStopped, ""
	}
	return store.JobFailed, err.Error()
}
