package console

import (
	"context"
	"time"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// experimentTurn records a live turn of a stream in the running experiment
// the stream takes part in, if any: the viewers who asked are exposed to
// the stream's arm (the per-viewer denominators), the session's time on
// air is extended to the turn, and the turn is stored under the arm. bound
// is the harness version the stream was bound to when the turn ran; a turn
// under another version (the switch at the turn boundary has not happened
// yet, or a release moved the stream mid-experiment) is not the arm's and
// is left out. shed is how many viewer messages the session's queue dropped
// since the previous turn (the shed guardrail). Failures are logged: a turn
// is never held up by its experiment.
func (s *Server) experimentTurn(streamID, bound string, t *runtime.Turn, shed int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !s.experimentsReady(ctx) {
		return
	}
	id, x, ok, err := s.runningExperimentOn(ctx, streamID)
	if err != nil {
		s.log.Warn("experiment turn: lookup", "stream", streamID, "err", err)
		return
	}
	if !ok || x.Arm == "" || bound != x.HarnessVersion {
		return
	}
	now := s.store.Now().UTC()
	exps := s.experiments()
	viewers := t.Viewers
	if t.Event == harness.EventNarrationTick {
		viewers = nil // the strategy, not a viewer, asked
	}
	for _, v := range viewers {
		if _, err := exps.Assign(ctx, id, streamID, v, now); err != nil {
			s.log.Warn("experiment turn: exposure", "experiment", id, "stream", streamID, "err", err)
			return
		}
	}
	start := now.Add(-t.Timing.Total)
	if err := exps.RecordSession(ctx, experiment.StreamSession{ID: t.Session, Stream: streamID, Start: start, End: now}); err != nil {
		s.log.Warn("experiment turn: session", "experiment", id, "stream", streamID, "err", err)
		return
	}
	rec := experiment.TurnOf(t, complianceHooksOf(t))
	if t.Event == harness.EventNarrationTick {
		rec.Viewer = ""
	}
	rec.Experiment, rec.Stream, rec.Arm, rec.Time, rec.Shed = id, streamID, x.Arm, now, shed
	if err := exps.RecordTurn(ctx, rec); err != nil {
		s.log.Warn("experiment turn: record", "experiment", id, "stream", streamID, "turn", t.ID, "err", err)
	}
}

// complianceHooksOf names the hooks that checked a turn's reply
// (after_response): their denials, rewrites and retries are the
// experiment's compliance violations.
func complianceHooksOf(t *runtime.Turn) []string {
	var names []string
	for _, st := range t.Steps {
		if st.Kind == "hook" && st.Event == harness.EventAfterResponse {
			names = append(names, st.Name)
		}
	}
	return names
}
