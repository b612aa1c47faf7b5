package console

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/livehat/livehat/console/experiment"
	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/runtime"
)

// A live room under a running viewer-unit experiment keeps one session per
// arm: each runs the arm's harness version and checkpoint, each viewer's
// messages go to the session of the arm the experiment's stable hash gives
// them, and the control arm's session is the room's control session, the
// only one that runs the strategy, so the avatar does not narrate once per
// arm. Every arm's replies go to the room's one event feed. When the
// experiment stops, the room goes back to one session: the arms' sessions
// leave the routing, answer what they were already asked and close,
// handing anything still queued to the session that serves the viewer now.

// armPin is what a running experiment fixes for one of a room's sessions.
type armPin struct {
	// experiment and arm name the experiment and arm the session serves;
	// both are empty outside experiments.
	experiment string
	arm        string
	// version is the harness version the arm runs; "" runs the stream's own.
	version string
	// checkpoint is the model checkpoint the arm serves; "" serves the
	// organisation's serving model.
	checkpoint string
	// air is the id a viewer-unit experiment records the stream's time on
	// air under: one for all the arms' sessions of a room, so the stream's
	// hours are not counted once per arm.
	air string
}

// sameArm reports whether two pins serve the same arm the same way (the
// air id aside).
func (p armPin) sameArm(q armPin) bool {
	return p.experiment == q.experiment && p.arm == q.arm && p.version == q.version && p.checkpoint == q.checkpoint
}

// roomLayout is the sessions a room should run.
type roomLayout struct {
	// split is the running viewer-unit experiment whose arms split the
	// room's viewers; nil runs one session.
	split *experiment.Experiment
	// pins has one entry per session; pins[0] is the control session's.
	pins []armPin
}

// key identifies a layout, to hold back one that failed to open.
func (l roomLayout) key() string {
	var b strings.Builder
	for _, p := range l.pins {
		fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x01", p.experiment, p.arm, p.version, p.checkpoint)
	}
	return b.String()
}

// layoutFor is the layout of a stream's room under the experiment running
// on it: one session outside experiments; one session with the stream's
// arm's checkpoint under a stream-unit experiment (the arm's harness
// version is the one the stream is bound to); one session per arm under a
// viewer-unit experiment. On error the layout is the plain one.
func (s *Server) layoutFor(ctx context.Context, streamID string) (roomLayout, error) {
	plain := roomLayout{pins: []armPin{{}}}
	id, x, ok, err := s.experiments().RunningOn(ctx, streamID)
	if err != nil {
		if !s.experimentsReady(ctx) {
			return plain, nil // a store without the experiments' tables runs none
		}
		return plain, err
	}
	if !ok {
		return plain, nil
	}
	e, err := s.experiments().Get(ctx, id)
	if err != nil {
		return plain, err
	}
	switch e.Unit {
	case experiment.UnitStream:
		i := e.ArmIndex(x.Arm)
		if i < 0 {
			return plain, nil
		}
		return roomLayout{pins: []armPin{{experiment: id, arm: x.Arm, checkpoint: e.Arms[i].Checkpoint}}}, nil
	case experiment.UnitViewer:
		l := roomLayout{split: &e}
		for _, a := range e.Arms {
			l.pins = append(l.pins, armPin{experiment: id, arm: a.Name, version: a.HarnessVersion, checkpoint: a.Checkpoint})
		}
		return l, nil
	}
	return plain, fmt.Errorf("experiment %s: unknown unit %q", id, e.Unit)
}

// sessionsLocked lists the room's routed sessions, the control first. The
// caller holds r.mu.
func (r *liveRoom) sessionsLocked() []*liveSession {
	if r.live == nil {
		return nil
	}
	out := []*liveSession{r.live}
	if r.split != nil {
		for _, a := range r.split.Arms {
			if ls := r.arms[a.Name]; ls != nil && ls != r.live {
				out = append(out, ls)
			}
		}
	}
	return out
}

// arrange brings the room's sessions to a layout: a session whose model
// fits a wanted arm is kept (and moved to the arm's harness version by the
// next apply); the others are opened; sessions no arm keeps retire. The
// strategy moves with the control session. Nothing changes when a session
// cannot be opened. The caller holds r.mu.
func (r *liveRoom) arrange(ctx context.Context, st *store.Stream, want roomLayout) error {
	have := r.sessionsLocked()
	if len(have) == len(want.pins) {
		same := true
		for i, ls := range have {
			same = same && ls.pinned().sameArm(want.pins[i])
		}
		if same {
			return nil
		}
	}
	air := ""
	if want.split != nil {
		air = uuid.NewString()
		if r.split != nil && r.split.ID == want.split.ID && r.live != nil {
			air = r.live.pinned().air
		}
	}
	pins := make([]armPin, len(want.pins))
	for i, p := range want.pins {
		p.air = air
		pins[i] = p
	}
	// Keep sessions that already serve an arm, then any of the same model.
	next := make([]*liveSession, len(pins))
	kept := map[*liveSession]bool{}
	for pass := range 2 {
		for i, p := range pins {
			for _, ls := range have {
				cur := ls.pinned()
				if next[i] != nil || kept[ls] || cur.checkpoint != p.checkpoint || (pass == 0 && !cur.sameArm(p)) {
					continue
				}
				next[i], kept[ls] = ls, true
			}
		}
	}
	var opened []*liveSession
	for i, p := range pins {
		if next[i] != nil {
			continue
		}
		ls, err := r.open(ctx, st, p)
		if err != nil {
			for _, o := range opened {
				r.retire(o) // idle: closed at the next maintenance
			}
			if p.arm != "" {
				return fmt.Errorf("arm %q of experiment %s: %w", p.arm, p.experiment, err)
			}
			return err
		}
		opened = append(opened, ls)
		next[i] = ls
	}
	control := r.live
	r.live, r.split, r.arms = next[0], want.split, nil
	if want.split != nil {
		r.arms = make(map[string]*liveSession, len(pins))
		for i, p := range pins {
			r.arms[p.arm] = next[i]
		}
	}
	for i, ls := range next {
		if kept[ls] {
			ls.repin(pins[i])
		}
	}
	for _, ls := range have {
		if !kept[ls] {
			r.retire(ls)
		}
	}
	if control != r.live {
		if control != nil {
			control.stopStrategy()
		}
		if r.live.onAir() {
			r.live.startStrategy(r.hub.ctx)
		}
	}
	r.publishLocked("session", r.stateLocked())
	return nil
}

// retiringSession is a session that left the routing, since when.
type retiringSession struct {
	ls    *liveSession
	since time.Time
}

// retire takes a session out of the routing; closeRetired closes it once
// it has answered what it was asked. The caller holds r.mu.
func (r *liveRoom) retire(ls *liveSession) {
	ls.retired.Store(true)
	ls.stopStrategy()
	r.retiring = append(r.retiring, retiringSession{ls: ls, since: time.Now()})
}

// closeRetired closes the retired sessions that are idle or have had
// liveRetireAfter to finish; what one still held is handed on (handOff).
func (r *liveRoom) closeRetired() {
	r.mu.Lock()
	var done []*liveSession
	keep := r.retiring[:0]
	for _, x := range r.retiring {
		if x.ls.idle() || time.Since(x.since) > liveRetireAfter {
			done = append(done, x.ls)
		} else {
			keep = append(keep, x)
		}
	}
	r.retiring = keep
	r.mu.Unlock()
	for _, ls := range done {
		ls.sess.Close()
		<-ls.pumped
		pin := ls.pinned()
		r.hub.log.Info("live arm session closed", "stream", r.streamID, "session", ls.sess.ID(), "experiment", pin.experiment, "arm", pin.arm)
		r.publish("retired", fiber.Map{"session": ls.sess.ID(), "experiment": pin.experiment, "arm": pin.arm})
	}
}

// handOff queues a message a retired session still held on the session
// that serves its viewer now; false when the room has none.
func (r *liveRoom) handOff(m runtime.Message) bool {
	r.mu.Lock()
	ls := r.routeLocked(m.Viewer)
	r.mu.Unlock()
	return ls != nil && ls.sess.Submit(m) == nil
}

// route is the session that answers a viewer (to): their arm's under a
// viewer-unit experiment, else the control session. control is the
// control session when it is another one: it runs the strategy, so it
// counts the room's messages (Session.Observe), not its own arm's only.
func (r *liveRoom) route(viewer string) (to, control *liveSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	to = r.routeLocked(viewer)
	if to != r.live {
		control = r.live
	}
	return to, control
}

// routeLocked is route for callers holding r.mu. The arm is the one
// experiment.Store.Assign records for the viewer (the same stable hash).
func (r *liveRoom) routeLocked(viewer string) *liveSession {
	if r.split != nil {
		if unit, err := r.split.UnitID(r.streamID, viewer); err == nil {
			if a, err := r.split.Assign(unit); err == nil && r.arms[a.Name] != nil {
				return r.arms[a.Name]
			}
		}
	}
	return r.live
}

// state describes the room's sessions for the live view.
func (r *liveRoom) state() fiber.Map {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stateLocked()
}

// stateLocked is the control session's state, with every arm's under a
// viewer-unit experiment. The caller holds r.mu.
func (r *liveRoom) stateLocked() fiber.Map {
	if r.live == nil {
		return fiber.Map{"stream": r.streamID, "session": ""}
	}
	m := r.live.state(r.streamID)
	if r.split != nil {
		arms := make([]fiber.Map, 0, len(r.split.Arms))
		for _, a := range r.split.Arms {
			if ls := r.arms[a.Name]; ls != nil {
				arms = append(arms, ls.state(r.streamID))
			}
		}
		m["unit"], m["arms"] = r.split.Unit, arms
	}
	return m
}

// queueStatsLocked adds up the queue counters of the room's sessions, the
// retiring ones included. The caller holds r.mu.
func (r *liveRoom) queueStatsLocked() runtime.QueueStats {
	var sum runtime.QueueStats
	all := r.sessionsLocked()
	for _, x := range r.retiring {
		all = append(all, x.ls)
	}
	for _, ls := range all {
		sum = sum.Add(ls.sess.QueueStats())
	}
	return sum
}
