package console

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/livehat/livehat/console/store"
)

// TestJobQueue runs five jobs on two slots: at most two run at once, a
// job stopped while queued never runs, a stopped running job frees its
// slot, and closing the queue interrupts the rest.
func TestJobQueue(t *testing.T) {
	q := newJobQueue(2)
	var running, peak atomic.Int32
	started := make(chan string, 5)
	results := make(chan [2]string, 5)
	for i := range 5 {
		id := fmt.Sprint(i)
		ok := q.submit(id, func(ctx context.Context) {
			if ctx.Err() == nil {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				started <- id
				<-ctx.Done()
				running.Add(-1)
			}
			state, _ := endState(ctx, ctx.Err())
			results <- [2]string{id, string(state)}
		})
		if !ok {
			t.Fatalf("job %s refused", id)
		}
	}
	a, b := <-started, <-started
	if q.submit(a, func(context.Context) {}) {
		t.Errorf("job %s was queued twice", a)
	}
	if !q.busy(a) || !q.busy(b) {
		t.Error("running jobs are not busy")
	}
	var queued string
	for i := range 5 {
		if id := fmt.Sprint(i); id != a && id != b {
			queued = id
			break
		}
	}
	<-q.stop(queued)
	<-q.stop(a)
	if q.stop(a) != nil || q.busy(a) {
		t.Errorf("job %s is still known after it returned", a)
	}
	q.close()
	if q.submit("late", func(context.Context) {}) {
		t.Error("a closed queue took a job")
	}
	close(results)
	got := map[string]string{}
	for r := range results {
		got[r[0]] = r[1]
	}
	if len(got) != 5 || got[a] != "stopped" || got[queued] != "stopped" {
		t.Errorf("endings %v: want %s and %s stopped", got, a, queued)
	}
	for id, st := range got {
		if id != a && id != queued && st != string(store.JobInterrupted) {
			t.Errorf("job %s ended %s at shutdown, want interrupted", id, st)
		}
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d jobs ran at once on two slots", p)
	}
}

func appendFile(t testing.TB, path string, data []byte) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

func TestMetricsTailStartsOverWhenTheFileShrinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	tail := &metricsTail{path: path}
	if lines, reset, err := tail.next(); len(lines) != 0 || reset || err != nil {
		t.Fatalf("no file yet: %q %v %v", lines, reset, err)
	}
	appendFile(t, path, []byte("{\"step\":1}\n{\"step\":2}\n{\"step\":3}\n"))
	if lines, _, _ := tail.next(); len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	// A resumed run keeps the steps up to its checkpoint.
	if err := os.WriteFile(path, []byte("{\"step\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, reset, err := tail.next()
	if err != nil || !reset || len(lines) != 1 || string(lines[0]) != `{"step":1}` {
		t.Errorf("after the file shrank: %q reset=%v %v", lines, reset, err)
	}
}

// FuzzMetricsTail appends data in chunks and checks that the tail returns
// exactly the complete, non-blank lines, each once and in order.
func FuzzMetricsTail(f *testing.F) {
	f.Add([]byte("{\"step\":1}\n{\"step\":2}\n{\"st"), uint8(3))
	f.Add([]byte("\n\n  \n{}\r\n"), uint8(1))
	f.Add([]byte("no newline at all"), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		path := filepath.Join(t.TempDir(), "metrics.jsonl")
		tail := &metricsTail{path: path}
		size := int(chunk)%7 + 1
		var got [][]byte
		for i := 0; i < len(data); i += size {
			appendFile(t, path, data[i:min(i+size, len(data))])
			lines, reset, err := tail.next()
			if err != nil || reset {
				t.Fatalf("next: reset=%v %v", reset, err)
			}
			got = append(got, lines...)
		}
		var want [][]byte
		if end := bytes.LastIndexByte(data, '\n'); end >= 0 {
			for _, l := range bytes.Split(data[:end], []byte{'\n'}) {
				if l = bytes.TrimSpace(l); len(l) > 0 {
					want = append(want, l)
				}
			}
		}
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("lines %q, want %q", got, want)
		}
	})
}
