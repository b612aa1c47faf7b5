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
// the turn's arm (the per-viewer denominators), the stream's time on air
// is extended to the turn, and the turn is stored under the arm. bound is
// the harness version the turn ran; pin is the arm the session that ran it
// serves. Under a stream-unit experiment the arm is the stream's; under a
// viewer-unit one it is the session's, and each viewer who asked must be
// assigned to it. A turn that is not the arm's is left out: it ran another
// harness version than the arm's (the switch at the turn boundary has not
// happened yet, or a release moved the stream mid-experiment) or another
// checkpoint, or, under viewer units, it is a narration every arm's
// viewers heard. shed is how many viewer messages the session's queue
// dropped since the previous turn (the shed guardrail). Failures are
// logged: a turn is never held up by its experiment.
func (s *Server) experimentTurn(streamID, bound string, pin armPin, t *runtime.Turn, shed int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !s.experimentsReady(ctx) {
		return
	}
	id, x, ok, err := s.experiments().RunningOn(ctx, streamID)
	if err != nil {
		s.log.Warn("experiment turn: lookup", "stream", streamID, "err", err)
		return
	}
	if !ok {
		return
	}
	exps := s.experiments()
	e, err := exps.Get(ctx, id)
	if err != nil {
		s.log.Warn("experiment turn: lookup", "experiment", id, "err", err)
		return
	}
	narration := t.Event == harness.EventNarrationTick
	var arm experiment.Arm
	air := t.Session
	switch e.Unit {
	case experiment.UnitStream:
		i := e.ArmIndex(x.Arm)
		if i < 0 || bound != x.HarnessVersion || pin.checkpoint != e.Arms[i].Checkpoint {
			return
		}
		arm = e.Arms[i]
	case experiment.UnitViewer:
		i := e.ArmIndex(pin.arm)
		if pin.experiment != id || i < 0 || narration || len(t.Viewers) == 0 {
			return
		}
		arm = e.Arms[i]
		if (arm.HarnessVersion != "" && bound != arm.HarnessVersion) || pin.checkpoint != arm.Checkpoint {
			return
		}
		for _, v := range t.Viewers {
			if got, err := e.Assign(v); err != nil || got.Name != arm.Name {
				s.log.Warn("experiment turn: a viewer of another arm was answered by this one", "experiment", id, "arm", arm.Name, "viewer", v)
				return
			}
		}
		air = pin.air
	default:
		return
	}
	now := s.store.Now().UTC()
	viewers := t.Viewers
	if narration {
		viewers = nil // the strategy, not a viewer, asked
	}
	for _, v := range viewers {
		if _, err := exps.Assign(ctx, id, streamID, v, now); err != nil {
			s.log.Warn("experiment turn: exposure", "experiment", id, "stream", streamID, "err", err)
			return
		}
	}
	start := now.Add(-t.Timing.Total)
	if err := exps.RecordSession(ctx, experiment.StreamSession{ID: air, Stream: streamID, Start: start, End: now}); err != nil {
		s.log.Warn("experiment turn: session", "experiment", id, "stream", streamID, "err", err)
		return
	}
	rec := experiment.TurnOf(t, complianceHooksOf(t))
	if narration {
		rec.Viewer = ""
	}
	rec.Experiment, rec.Stream, rec.Arm, rec.Time, rec.Shed = id, streamID, arm.Name, now, shed
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
