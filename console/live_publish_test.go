package console

import (
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

// hookOf is the named hook's decision in a live turn's trace.
func hookOf(t *testing.T, turn liveSSE, name string) map[string]any {
	t.Helper()
	hooks, _ := turn.Data["hooks"].([]any)
	for _, h := range hooks {
		if m, _ := h.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("the turn ran no hook %q: %v", name, turn.Data["hooks"])
	return nil
}

// TestPublishSwitchesWithItsPluginsLoaded is the atomic publish through the
// API: a session opened while the moderation plugin was off; the plugin
// comes back and a version whose spam filter is fail_closed is published;
// the first turn after the publish runs that version with the plugin
// loaded, so the fail_closed hook decides instead of failing.
func TestPublishSwitchesWithItsPluginsLoaded(t *testing.T) {
	e := newLiveEnv(t)
	e.expect(t, 200, e.admin, "POST", "/api/plugins/moderation/disable?override=the+test+turns+it+back+on", nil)
	events := e.subscribe(t, e.merchant, e.demoStream)
	waitLive(t, events, "session")
	say := func(text string) liveSSE {
		t.Helper()
		e.expect(t, 202, e.merchant, "POST", "/api/streams/"+e.demoStream+"/live/messages",
			map[string]any{"messages": []map[string]any{{"viewer": "fan", "text": text}}})
		return waitLive(t, events, "turn")
	}
	before := say("hello")
	if h := hookOf(t, before, "spam_filter"); !strings.Contains(h["error"].(string), `plugin "moderation" is not installed`) || before.Data["harness_version"] != e.demo.Version() {
		t.Fatalf("with moderation off the demo's fail_open spam filter should fail and allow: %v", h)
	}

	e.expect(t, 200, e.admin, "POST", "/api/plugins/moderation/enable", nil)
	doc, v2 := editedDemo(t, e.testEnv, func(h *harness.Harness) {
		for i := range h.Hooks {
			if h.Hooks[i].Name == "spam_filter" {
				h.Hooks[i].OnFailure = harness.FailClosed
			}
		}
	})
	commitVersion(t, e.testEnv, doc)
	e.expect(t, 201, e.admin, "POST", "/api/releases", map[string]any{"version": v2.Version(), "streams": []string{e.demoStream},
		"override": "the spam filter fails closed from now on"})

	after := say("How much is the serum?")
	if after.Data["harness_version"] != v2.Version() {
		t.Fatalf("the first turn after the publish ran %v, want %s", after.Data["harness_version"], v2.ShortVersion())
	}
	if h := hookOf(t, after, "spam_filter"); h["error"] != nil && h["error"] != "" || h["action"] != "allow" {
		t.Errorf("the new version's fail_closed spam filter: %v; want the moderation plugin to decide", h)
	}
	if after.Data["outcome"] == "denied" {
		t.Errorf("the first turn after the publish was denied: %v", after.Data["reason"])
	}
}
