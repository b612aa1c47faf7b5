package sft

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/trainer/liveroom"
)

// teacher is the strong policy whose answers become SFT trajectories: the
// messages after the viewer's question, under harness h (a variant when
// mapping is set). before holds the stream context and the conversation
// memory the trajectory's prompt shows before the question, so a model
// teacher answers the prompt the student is trained on.
type teacher interface {
	answer(ctx context.Context, room *liveroom.Room, h *harness.Harness, mapping *hsa.Mapping, q liveroom.Question, before harness.Conversation) ([]harness.Message, error)
}

// expertTeacher is the live room's scripted expert.
type expertTeacher struct{}

func (expertTeacher) answer(_ context.Context, room *liveroom.Room, h *harness.Harness, mapping *hsa.Mapping, q liveroom.Question, _ harness.Conversation) ([]harness.Message, error) {
	return room.Expert(h, mapping, q)
}

// remoteTeacher is a model behind an OpenAI-compatible server, run through
// the turn loop: the harness prompt (tools passed to the server's own
// template), then model ↔ tool rounds up to the harness's limit, the room
// serving the tools.
type remoteTeacher struct {
	client      *remote.Client
	temperature *float64
}

func newTeacher(cfg DataConfig) (teacher, error) {
	if cfg.Teacher == "" {
		return expertTeacher{}, nil
	}
	client, err := remote.New(remote.Config{BaseURL: cfg.Teacher, Model: cfg.TeacherModel, APIKey: cfg.TeacherAPIKey})
	if err != nil {
		return nil, fmt.Errorf("sft: teacher: %w", err)
	}
	t := 0.0 // the report keeps the teacher's most likely answer
	return remoteTeacher{client: client, temperature: &t}, nil
}

func (t remoteTeacher) answer(ctx context.Context, room *liveroom.Room, h *harness.Harness, mapping *hsa.Mapping, q liveroom.Question, before harness.Conversation) ([]harness.Message, error) {
	history := append(slices.Clip(before.Messages), harness.Message{Role: harness.RoleUser, Content: q.Text})
	asked := len(history)
	rounds := h.Pipeline.ToolRounds.Value
	for round := 0; ; round++ {
		p, err := harness.Render(h, harness.Conversation{Context: before.Context, Messages: history}, harness.RenderOptions{OmitToolsSection: true})
		if err != nil {
			return nil, err
		}
		msgs, tools := toChat(p)
		resp, err := t.client.Complete(ctx, remote.Request{Messages: msgs, Tools: tools, Temperature: t.temperature})
		if err != nil {
			return nil, fmt.Errorf("teacher: %w", err)
		}
		reply := harness.Message{Role: harness.RoleAssistant, Content: stripThinking(resp.Message.Content)}
		for _, c := range resp.Message.ToolCalls {
			reply.ToolCalls = append(reply.ToolCalls, harness.ToolCall{Name: c.Name, Arguments: c.Arguments})
		}
		history = append(history, reply)
		if len(reply.ToolCalls) == 0 {
			return history[asked:], nil
		}
		if round >= rounds {
			return nil, fmt.Errorf("%w: the teacher still called tools after %d rounds", errRejected, rounds)
		}
		for _, c := range reply.ToolCalls {
			history = append(history, harness.Message{Role: harness.RoleTool, Name: c.Name, Content: serveTool(room, h, mapping, c)})
		}
	}
}

// serveTool runs a call made under h: the load-skill tool reads h's own
// skills, the room's tools are called under their canonical names (the
// mapping's inverse). Failures become the {"error": …} result the runtime
// shows a model.
func serveTool(room *liveroom.Room, h *harness.Harness, mapping *hsa.Mapping, c harness.ToolCall) string {
	fail := func(msg string) string {
		b, _ := json.Marshal(map[string]string{"error": msg})
		return string(b)
	}
	call, err := hsa.CallOf(c)
	if err != nil {
		return fail(err.Error())
	}
	if call.Name == h.LoadSkillToolName() {
		id, _ := call.Arguments[h.LoadSkillParamName()].(string)
		s, ok := h.Skill(id)
		if !ok {
			return fail(fmt.Sprintf("unknown skill %q", id))
		}
		return harness.SkillContent(s)
	}
	if mapping != nil {
		if call, err = mapping.Inverse(call); err != nil {
			return fail(fmt.Sprintf("tool %s failed: %v", c.Name, err))
		}
	}
	// CallOf keeps numbers as json.Number; the room's tools read arguments
	// decoded the plain way, as the runtime passes them.
	var args map[string]any
	if b, err := json.Marshal(call.Arguments); err != nil || json.Unmarshal(b, &args) != nil {
		return fail(fmt.Sprintf("tool %s: arguments are not a JSON object", c.Name))
	}
	raw, err := room.CallTool(call.Name, args)
	if err != nil {
		return fail(err.Error())
	}
	return string(raw)
}

// toChat converts a rendered harness prompt to the model core's chat types.
func toChat(p harness.Prompt) ([]chat.Message, []chat.Tool) {
	msgs := make([]chat.Message, len(p.Messages))
	for i, m := range p.Messages {
		msgs[i] = chat.Message{Role: m.Role, Content: m.Content, Name: m.Name}
		for _, c := range m.ToolCalls {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, chat.ToolCall{Name: c.Name, Arguments: c.Arguments})
		}
	}
	tools := make([]chat.Tool, len(p.Tools))
	for i, s := range p.Tools {
		tools[i] = chat.Tool{Name: s.Function.Name, Description: s.Function.Description, Parameters: s.Function.Parameters}
	}
	return msgs, tools
}

// stripThinking drops a <think>…</think> block a server left in the
// content: the student learns the answer, not the teacher's reasoning.
func stripThinking(s string) string {
	if i, j := strings.Index(s, "<think>"), strings.Index(s, "</think>"); i >= 0 && j > i {
		s = s[:i] + s[j+len("</think>"):]
	}
	return strings.TrimSpace(s)
}
