package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// ExpertModel is the live room's scripted expert policy as a runtime
// model: it plays the expert transcript for its case one assistant turn at
// a time, whatever the runtime feeds back. It is the upper bound of the
// graders and the reference that the suites and the runtime agree.
type ExpertModel struct {
	c    Case
	once sync.Once
	msgs []harness.Message
	err  error
}

// NewExpert is a ModelFactory for the expert policy. For an episode it
// returns a model that plays the expert of whichever step is being asked.
func NewExpert(c Case) (runtime.Model, error) {
	if len(c.Item.Steps) == 0 {
		return &ExpertModel{c: c}, nil
	}
	ep := &episodeExpert{}
	for _, st := range c.Item.Steps {
		sc := c
		sc.Item = Item{ID: st.Question.ID, Category: string(st.Question.Type), Room: c.Item.Room, Question: st.Question}
		ep.steps = append(ep.steps, st)
		ep.models = append(ep.models, &ExpertModel{c: sc})
	}
	return ep, nil
}

// episodeExpert dispatches each generation to the expert of the step
// whose text is the latest in the conversation.
type episodeExpert struct {
	steps  []Step
	models []*ExpertModel
}

func (e *episodeExpert) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != harness.RoleUser {
			continue
		}
		for j := len(e.steps) - 1; j >= 0; j-- {
			if strings.Contains(m.Content, e.steps[j].Question.Text) {
				return e.models[j].Generate(ctx, req)
			}
		}
	}
	return runtime.Response{}, fmt.Errorf("expert: the conversation asks none of the episode's steps")
}

// Generate returns the expert's next assistant turn after the last user
// message (a retry message starts the transcript over). A tool result that
// is an error, malformed or empty is retried once with the same call; if
// it fails again the expert says the information is unavailable rather
// than invent it.
func (m *ExpertModel) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	m.once.Do(func() {
		// A fault-adapted gold lists the retry of the failing call; the
		// expert plans without it and retries only when a call fails.
		q := m.c.Item.Question
		q.Gold.Calls = slices.CompactFunc(slices.Clone(q.Gold.Calls), func(a, b hsa.Call) bool { return hsa.SameCall(a, b) })
		m.msgs, m.err = m.c.Room.Expert(m.c.Harness, m.mapping(), q)
	})
	if m.err != nil {
		return runtime.Response{}, m.err
	}
	var turns []harness.Message
	for _, msg := range m.msgs {
		if msg.Role == harness.RoleAssistant {
			turns = append(turns, msg)
		}
	}
	if len(turns) == 0 {
		return runtime.Response{}, nil // the expert stays silent (spam)
	}
	start := len(req.Messages)
	for start > 0 && req.Messages[start-1].Role != harness.RoleUser {
		start--
	}
	type step struct {
		call   harness.ToolCall
		failed bool
	}
	var steps []step
	for i, msg := range req.Messages[start:] {
		if msg.Role != harness.RoleAssistant || len(msg.ToolCalls) == 0 {
			continue
		}
		failed := false
		if j := start + i + 1; j < len(req.Messages) && req.Messages[j].Role == harness.RoleTool {
			failed = toolFailed(req.Messages[j].Content)
		}
		steps = append(steps, step{msg.ToolCalls[0], failed})
	}
	if n := len(steps); n > 0 && steps[n-1].failed {
		last := steps[n-1]
		if n >= 2 && steps[n-2].failed && sameCall(steps[n-2].call, last.call) {
			return runtime.Response{Content: liveroom.UnavailableReply(m.c.Item.Question.Lang)}, nil
		}
		return runtime.Response{ToolCalls: []harness.ToolCall{last.call}}, nil
	}
	k := 0
	for _, s := range steps {
		if !s.failed {
			k++
		}
	}
	if k >= len(turns) {
		return runtime.Response{}, fmt.Errorf("expert: no turn %d in a transcript of %d", k+1, len(turns))
	}
	t := turns[k]
	return runtime.Response{Content: t.Content, ToolCalls: t.ToolCalls}, nil
}

// mapping is how the expert writes the room's gold calls (the plugins'
// names) under the case's harness: the case's mapping, or else the
// renames the harness itself makes of its plugins' tools and arguments,
// so that the expert follows an operator's renames as a model must.
func (m *ExpertModel) mapping() *hsa.Mapping {
	if m.c.Mapping != nil {
		return m.c.Mapping
	}
	if fp := hsa.FromPlugins(m.c.Harness); len(fp.Steps) > 0 {
		return &fp
	}
	return nil
}

// toolFailed reports whether a tool result is an error, broken JSON, or
// empty: what a careful agent does not build an answer on. Plain text
// (a loaded skill) is a result, not a failure.
func toolFailed(content string) bool {
	t := strings.TrimSpace(content)
	if t == "" {
		return true
	}
	if !strings.HasPrefix(t, "{") {
		return false
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(t), &v); err != nil {
		return true
	}
	_, isErr := v["error"]
	return isErr || len(v) == 0
}

func sameCall(a, b harness.ToolCall) bool {
	return a.Name == b.Name && string(a.Arguments) == string(b.Arguments)
}
