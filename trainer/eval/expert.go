package eval

import (
	"context"
	"fmt"
	"sync"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
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

// NewExpert is a ModelFactory for the expert policy.
func NewExpert(c Case) (runtime.Model, error) { return &ExpertModel{c: c}, nil }

// Generate returns the expert's next assistant turn: the k-th after the
// last user message (a retry message starts the transcript over).
func (m *ExpertModel) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	m.once.Do(func() { m.msgs, m.err = m.c.Room.Expert(m.c.Harness, m.c.Mapping, m.c.Item.Question) })
	if m.err != nil {
		return runtime.Response{}, m.err
	}
	k := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != harness.RoleUser; i-- {
		if req.Messages[i].Role == harness.RoleAssistant {
			k++
		}
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
	if k >= len(turns) {
		return runtime.Response{}, fmt.Errorf("expert: no turn %d in a transcript of %d", k+1, len(turns))
	}
	t := turns[k]
	return runtime.Response{Content: t.Content, ToolCalls: t.ToolCalls}, nil
}
