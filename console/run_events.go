package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/trainer/nn/runfolder"
)

const (
	// eventPoll is how often a run's event stream looks for new metrics
	// and state changes.
	eventPoll = 250 * time.Millisecond
	// eventStreamMax ends one event stream of a live run; the browser's
	// EventSource reconnects and is sent the history again, so no stream
	// outlives the server's write timeout.
	eventStreamMax = 45 * time.Second
)

// events streams a run as Server-Sent Events: "run" (the run row, at
// first and whenever its state or step changes), "metrics" (each line of
// metrics.jsonl, from the first), "reset" (the metrics restarted from the
// top: a resumed run dropped the steps after its checkpoint), "problem"
// (the run or its metrics could not be read; the stream closes), and "end"
// once the run is no longer queued or running and every line was sent;
// the stream closes after "end".
func (t *trainingRuns) events(c *fiber.Ctx) error {
	sc := scopeOf(c)
	r, err := t.s.store.Run(c.UserContext(), sc, c.Params("id"))
	if err != nil {
		return storeError(err, "training run")
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	quit := t.queue.base.Done()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		t.streamRun(w, sc, r, quit)
	})
	return nil
}

func (t *trainingRuns) streamRun(w *bufio.Writer, sc store.Scope, r *store.TrainingRun, quit <-chan struct{}) {
	send := func(event string, data []byte) bool {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false
		}
		return w.Flush() == nil
	}
	sendRun := func(r *store.TrainingRun) bool {
		data, err := json.Marshal(viewRun(r))
		return err == nil && send("run", data)
	}
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil || !sendRun(r) {
		return
	}
	tail := &metricsTail{path: filepath.Join(r.Dir, runfolder.MetricsFile)}
	deadline := time.Now().Add(eventStreamMax)
	tick := time.NewTicker(eventPoll)
	defer tick.Stop()
	for {
		// Read the state before the metrics: a run seen finished has
		// written all its lines, so the drain below is complete.
		cur, err := t.s.store.Run(context.Background(), sc, r.ID)
		if err != nil {
			data, _ := json.Marshal(fiber.Map{"error": err.Error()})
			send("problem", data)
			return
		}
		lines, reset, err := tail.next()
		if err != nil {
			data, _ := json.Marshal(fiber.Map{"error": err.Error()})
			send("problem", data)
			return
		}
		if reset && !send("reset", []byte("{}")) {
			return
		}
		for _, l := range lines {
			if !send("metrics", l) {
				return
			}
		}
		if cur.State != r.State || cur.Step != r.Step || cur.Steps != r.Steps {
			if !sendRun(cur) {
				return
			}
			r = cur
		}
		if !cur.State.Live() {
			send("end", []byte(`{"state":"`+string(cur.State)+`"}`))
			return
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-tick.C:
		case <-quit:
			return
		}
	}
}
