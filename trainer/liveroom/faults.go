package liveroom

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

// FaultKind is how a tool fails.
type FaultKind string

// Tool faults seen in production: the injector reproduces each.
const (
	FaultTimeout   FaultKind = "timeout"   // the call does not answer in time
	FaultMalformed FaultKind = "malformed" // the result is not valid JSON
	FaultDenied    FaultKind = "denied"    // permission denied
	FaultEmpty     FaultKind = "empty"     // an empty result
)

// FaultKinds lists every kind.
func FaultKinds() []FaultKind {
	return []FaultKind{FaultTimeout, FaultMalformed, FaultDenied, FaultEmpty}
}

// Fault makes one tool fail. A transient fault (Times 1) fails the first
// call only, so a retry succeeds; a persistent fault (Times 0) fails every
// call, so the only honest answer is that the information is unavailable.
type Fault struct {
	Tool  string    `json:"tool"`
	Kind  FaultKind `json:"kind"`
	Times int       `json:"times"`
}

// Persistent reports whether every call fails.
func (f Fault) Persistent() bool { return f.Times == 0 }

// ErrToolTimeout is what a timed-out call returns.
var ErrToolTimeout = errors.New("tool call timed out")

// ToolRunner runs tools by name: the room itself, or the stream's tool
// plugins.
type ToolRunner interface {
	CallTool(name string, args map[string]any) (json.RawMessage, error)
}

// FaultInjector wraps a stream's tools with faults. It is shared by the
// robustness suite and by RL environments, and is safe for concurrent use.
type FaultInjector struct {
	Tools  ToolRunner
	Faults []Fault

	mu    sync.Mutex
	calls map[string]int
}

// CallTool runs a tool through the injector.
func (f *FaultInjector) CallTool(name string, args map[string]any) (json.RawMessage, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[name]++
	n := f.calls[name]
	f.mu.Unlock()
	for _, fault := range f.Faults {
		if fault.Tool != name || (!fault.Persistent() && n > fault.Times) {
			continue
		}
		switch fault.Kind {
		case FaultTimeout:
			return nil, ErrToolTimeout
		case FaultMalformed:
			return json.RawMessage(`{"price": "1`), nil
		case FaultDenied:
			return nil, fmt.Errorf("%s: permission denied", name)
		case FaultEmpty:
			return json.RawMessage(`{}`), nil
		}
	}
	return f.Tools.CallTool(name, args)
}

// WithFault adapts a question's gold to a fault on one of its tools. A
// transient fault adds the retry of the failing call to the gold. A
// persistent one removes that call's retry and every later call (they need
// its result), lets the reply name only the amounts the other tools give,
// and asks the reply to say the information is unavailable instead.
func (q Question) WithFault(f Fault, r *Room) Question {
	out := q
	g := q.Gold
	out.Gold = Gold{Skill: g.Skill, Silent: g.Silent}
	at := slices.IndexFunc(g.Calls, func(c hsa.Call) bool { return c.Name == f.Tool })
	if at < 0 {
		out.Gold = g
		return out
	}
	if !f.Persistent() {
		out.Gold = g
		out.Gold.Calls = slices.Insert(slices.Clone(g.Calls), at+1, g.Calls[at])
		return out
	}
	out.Gold.Calls = append(slices.Clone(g.Calls[:at+1]), g.Calls[at])
	out.Gold.MustState = []Fact{phrase("says the information is unavailable", unavailablePhrases()...)}
	if f.Tool != ToolProductLookup {
		// The lookup worked, so its price is known and may be named.
		if it := r.questionItem(q); it.ID != "" {
			out.Gold.Money = []int64{it.Price(), it.ListPrice}
		}
	}
	return out
}

func unavailablePhrases() []string {
	return []string{"unavailable", "can't check", "cannot check", "can't get", "not able to check", "unable to",
		"暂时查不到", "查不到", "无法查询", "暂时无法", "稍后"}
}

// UnavailableReply is how the expert says a tool's information cannot be
// had right now, in the viewer's language.
func UnavailableReply(l Lang) string {
	if l == LangZH {
		return "抱歉，系统暂时查不到这个信息，稍后再为您确认。"
	}
	return "Sorry, I'm unable to check that right now; I'll confirm it shortly."
}

// FaultResult is the tool turn the model reads when a call of the tool
// named shown (in the harness's names; base in the plugins') fails with
// kind, as the runtime writes it: an error object for a timeout, a denial
// or garbage (which the runtime never passes on as data), and the empty
// object as it came.
func FaultResult(shown, base string, kind FaultKind) string {
	msg := ""
	switch kind {
	case FaultTimeout:
		msg = shown + " failed: " + ErrToolTimeout.Error()
	case FaultMalformed:
		msg = shown + " returned malformed output"
	case FaultDenied:
		msg = shown + " failed: " + base + ": permission denied"
	default:
		return `{}`
	}
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

// ExpertUnderFault answers q as Expert does while fault f makes one of
// the room's tools fail, the way the runtime shows the failure: it
// retries a failed call once, and when the retry fails too it says the
// information is unavailable instead of inventing it. Grade the answer
// against q.WithFault(f, r).
func (r *Room) ExpertUnderFault(h *harness.Harness, mapping *hsa.Mapping, q Question, f Fault) ([]harness.Message, error) {
	plain, err := r.Expert(h, mapping, q)
	if err != nil {
		return nil, err
	}
	var msgs []harness.Message
	failures := 0
	for i := 0; i < len(plain); i++ {
		m := plain[i]
		if m.Role != harness.RoleAssistant || len(m.ToolCalls) == 0 || i+1 >= len(plain) {
			msgs = append(msgs, m)
			continue
		}
		result := plain[i+1]
		call := r.baseCallAt(q, plain, i)
		if call != f.Tool {
			msgs = append(msgs, m, result)
			i++
			continue
		}
		failures++
		failed := harness.Message{Role: harness.RoleTool, Name: result.Name, Content: FaultResult(m.ToolCalls[0].Name, f.Tool, f.Kind)}
		msgs = append(msgs, m, failed, m)
		if !f.Persistent() {
			msgs = append(msgs, result)
			i++
			continue
		}
		msgs = append(msgs, failed, harness.Message{Role: harness.RoleAssistant, Content: UnavailableReply(q.Lang)})
		return msgs, nil
	}
	return msgs, nil
}

// baseCallAt is the plugin name of the gold call whose assistant turn is
// plain[i]: the k-th call turn of the expert's transcript is the k-th
// gold call.
func (r *Room) baseCallAt(q Question, plain []harness.Message, i int) string {
	k := 0
	for _, m := range plain[:i] {
		if m.Role == harness.RoleAssistant && len(m.ToolCalls) > 0 {
			k++
		}
	}
	if k < len(q.Gold.Calls) {
		return q.Gold.Calls[k].Name
	}
	return ""
}
