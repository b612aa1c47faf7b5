package livebench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/runtime"
)

// TestRunAccountsForEveryMessage plays two rooms for a few seconds with a
// random tiny model and the example hooks, one question a turn and then
// up to four: every message sent must be answered (or given the safe
// line), denied as spam, shed or dropped as stale, and latencies and load
// must be measured.
func TestRunAccountsForEveryMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	ctx := context.Background()
	h := testfixture.DemoHarness(t)
	sb := testfixture.DemoSandbox(t, nil)
	cpu := model.NewCPU(engine.DefaultThreads())
	defer cpu.Close()
	e, err := RandomEngine("tiny", cpu, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m := runtime.LocalModel{Engine: e, Constrain: true}
	reps, err := Run(ctx, Config{Harness: h, Model: m, Sandbox: sb, Streams: 2, Rate: 2, Duration: 3 * time.Second, MaxTokens: 8, Seed: 3, Arms: []Arm{{Batch: 1}, {Batch: 4, PromoteAfter: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].Batch != 1 || reps[1].Batch != 4 || reps[1].PromoteAfter >= 0 {
		t.Fatalf("reports = %+v, want one per batch size", reps)
	}
	for _, rep := range reps {
		if rep.Sent == 0 {
			t.Fatal("no messages sent")
		}
		accounted := rep.Answered + rep.SafeLines + rep.Denied + rep.Shed + rep.Stale + rep.Closed
		if accounted != rep.Sent {
			t.Errorf("batch %d: %d messages sent but %d accounted for: %+v", rep.Batch, rep.Sent, accounted, rep)
		}
		if h := rep.Hooks["spam_filter"]; h.Turns != rep.Turns || h.P50 <= 0 {
			t.Errorf("batch %d: the moderation hook ran in %d of %d spoken turns (P50 %s)", rep.Batch, h.Turns, rep.Turns, h.P50)
		}
		if rep.Total.P50 <= 0 || rep.FirstChunk.P50 <= 0 || rep.Model.P50 <= 0 || rep.Busy <= 0 || rep.TrafficBusy <= 0 || rep.EngineBusy <= 0 || rep.Generations < rep.Turns || rep.PromptTokens <= 0 || rep.RoomBusy <= 0 {
			t.Errorf("batch %d: latencies or load not measured: %+v", rep.Batch, rep)
		}
	}
	if reps[0].Sent != reps[1].Sent {
		t.Errorf("the arms played different viewers: %d and %d messages", reps[0].Sent, reps[1].Sent)
	}
	if reps[0].Batched != 0 {
		t.Errorf("batch 1: %d questions batched", reps[0].Batched)
	}
}

func TestRandomEngineSizes(t *testing.T) {
	cpu := model.NewCPU(1)
	defer cpu.Close()
	if _, err := RandomEngine("huge", cpu, engine.Options{}); err == nil || !strings.Contains(err.Error(), `"huge"`) {
		t.Errorf("size huge: err = %v, want one naming it", err)
	}
}

// TestHookCosts: a hook's cost is its time summed over the turn, and a
// turn it sent back or rewrote counts once however often it did.
func TestHookCosts(t *testing.T) {
	a := &arm{hooks: map[string]*hookTally{}}
	retry := &harness.HookDecision{Action: harness.ActionRetry, Feedback: "x"}
	rewrite := &harness.HookDecision{Action: harness.ActionRewrite, Text: "y"}
	allow := &harness.HookDecision{Action: harness.ActionAllow}
	ms := time.Millisecond
	a.observeHooks(&runtime.Turn{Steps: []runtime.Step{
		{Kind: "hook", Name: "grounding", Took: 2 * ms, Decision: retry},
		{Kind: "model", Took: 100 * ms},
		{Kind: "hook", Name: "grounding", Took: 3 * ms, Decision: rewrite},
		{Kind: "hook", Name: "speech", Took: 1 * ms, Decision: allow},
	}})
	a.observeHooks(&runtime.Turn{Steps: []runtime.Step{
		{Kind: "hook", Name: "grounding", Took: 1 * ms, Decision: allow},
	}})
	g := a.hooks["grounding"]
	if g.cost.Turns != 2 || g.cost.Retried != 1 || g.cost.Rewrote != 1 || !slices.Equal(g.perTurn, []time.Duration{5 * ms, 1 * ms}) {
		t.Errorf("grounding: %+v per turn %v", g.cost, g.perTurn)
	}
	if s := a.hooks["speech"]; s.cost.Turns != 1 || s.cost.Retried != 0 {
		t.Errorf("speech: %+v", s.cost)
	}
}
