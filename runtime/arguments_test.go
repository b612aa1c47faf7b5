package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
)

// renamedLookup is the demo harness with product_lookup renamed to
// item_lookup and its argument query to item_name, mapped back to the
// plugin's name when withMap is set.
func renamedLookup(t *testing.T, withMap bool) *harness.Harness {
	t.Helper()
	h := demo(t).Clone()
	for i := range h.Tools {
		if h.Tools[i].Name != "product_lookup" {
			continue
		}
		h.Tools[i].Name = "item_lookup"
		h.Tools[i].Parameters = json.RawMessage(`{"type":"object","properties":{"item_name":{"type":"string","description":"What the viewer called the item."}},"required":["item_name"],"additionalProperties":false}`)
		h.Tools[i].QueryArgs = []string{"item_name"}
		if withMap {
			h.Tools[i].ArgumentMap = []harness.ArgumentRename{{Name: "item_name", Plugin: "query"}}
		}
	}
	if err := harness.Validate(h); err != nil {
		t.Fatal(err)
	}
	return h
}

// lookupModel loads the price skill, calls item_lookup and replies with
// what the tool said, or with the error it read.
func lookupModel() scriptedModel {
	return func(req Request) (Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == harness.RoleUser:
			return Response{ToolCalls: []harness.ToolCall{call("load_skill", `{"skill_id":"price_answer"}`)}}, nil
		case last.Role == harness.RoleTool && last.Name == "load_skill":
			return Response{ToolCalls: []harness.ToolCall{call("item_lookup", `{"item_name":"serum"}`)}}, nil
		default:
			return Response{Content: "tool said: " + last.Content}, nil
		}
	}
}

// toolStep is the turn's step of the named tool.
func toolStep(t *testing.T, turn *Turn, name string) Step {
	t.Helper()
	for _, st := range turn.Steps {
		if st.Kind == "tool" && st.Name == name {
			return st
		}
	}
	t.Fatalf("no %s step in %+v", name, turn.Steps)
	return Step{}
}

// TestArgumentMapReachesThePlugin: the model writes the harness's names,
// the hooks and the trace keep them, and the plugin receives its own.
func TestArgumentMapReachesThePlugin(t *testing.T) {
	ps := newPlugins()
	var got json.RawMessage
	ps.tools["storefront/product_lookup"] = func(args json.RawMessage) (json.RawMessage, error) {
		got = args
		return json.RawMessage(`{"found":true,"item_id":"SE1","price":"199"}`), nil
	}
	var hookSaw string
	ps.hooks["audit/before"] = func(in json.RawMessage) (harness.HookDecision, error) {
		var hi struct {
			Tool struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"tool"`
		}
		_ = json.Unmarshal(in, &hi)
		hookSaw = string(hi.Tool.Arguments)
		return harness.HookDecision{Action: harness.ActionAllow}, nil
	}
	h := renamedLookup(t, true)
	h.Hooks = append(h.Hooks, harness.Hook{Name: "audit", Event: harness.EventBeforeTool, Plugin: "audit", Export: "before"})
	s := startSession(t, Config{Harness: h, Plugins: ps, Model: lookupModel()})
	turn := ask(t, s, s.Listen(64), "How much is the serum?")
	if string(got) != `{"query":"serum"}` {
		t.Errorf("the plugin received %s, want its own name query", got)
	}
	if hookSaw != `{"item_name":"serum"}` {
		t.Errorf("the before_tool hook saw %s, want the harness's names", hookSaw)
	}
	st := toolStep(t, turn, "item_lookup")
	if st.Error != "" || string(st.Input) != `{"item_name":"serum"}` || !strings.Contains(turn.Reply, `"price":"199"`) {
		t.Errorf("step %+v, reply %q", st, turn.Reply)
	}
}

// TestPluginRefusalNamesTheHarnessTool runs the real storefront plugin
// under a harness that renamed an argument without mapping it: the trace
// names the harness tool, the plugin's export and what it received, never
// the schema's temporary file; the model reads the names it wrote.
func TestPluginRefusalNamesTheHarnessTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WASM plugin; skipped with -short")
	}
	ctx := context.Background()
	sb, err := OpenSandbox(ctx, testCacheDir(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	sb.SetTimeoutFloor(5 * time.Second)
	if _, err := sb.LoadGoDir(ctx, filepath.Join("..", "examples", "plugins", "storefront")); err != nil {
		t.Fatal(err)
	}
	catalog, err := os.ReadFile("../examples/plugins/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := sb.Plugins(catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		withMap   bool
		wantTrace string
		wantModel string
	}{
		{"mapped: the call works", true, "", `"item_id":"p-serum"`},
		{"unmapped: the plugin refuses", false,
			`tool item_lookup (plugin storefront@1.0.0, export product_lookup) refused the arguments {"item_name":"serum"}: `,
			`item_lookup refused its arguments: `},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := renamedLookup(t, c.withMap)
			h.Hooks = nil // only the storefront plugin is loaded
			s := startSession(t, Config{Harness: h, Plugins: ps, Model: lookupModel()})
			turn := ask(t, s, s.Listen(64), "How much is the serum?")
			st := toolStep(t, turn, "item_lookup")
			t.Logf("trace: %q; the model read: %q", st.Error, turn.Reply)
			if c.wantTrace == "" && st.Error != "" || !strings.HasPrefix(st.Error, c.wantTrace) {
				t.Errorf("trace error %q, want it to start %q", st.Error, c.wantTrace)
			}
			if c.wantTrace != "" && (!strings.Contains(st.Error, "query") || strings.Contains(st.Error, "file:") || strings.Contains(st.Error, "tool.json")) {
				t.Errorf("trace error %q should name the missing argument and no schema file", st.Error)
			}
			if !strings.Contains(turn.Reply, c.wantModel) {
				t.Errorf("the model read %q, want %q in it", turn.Reply, c.wantModel)
			}
		})
	}
}
