package sft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// CriticTurn is a turn whose first reply is flawed: the harness it runs
// under, the room (its catalog), the question, the teacher's messages up
// to the right reply (tool calls with their results), the stream context
// and the two replies.
type CriticTurn struct {
	Harness  *harness.Harness
	Room     *liveroom.Room
	Question liveroom.Question
	Messages []harness.Message
	Context  []harness.ContextItem
	Flawed   string
	Right    string
}

// Critic plays a CriticTurn through a harness's hooks and returns the
// turn's messages after the viewer's as a live session has them: the
// calls, the flawed reply, the hooks' feedback as the harness words a
// retry, and the right reply. It returns nil when the hooks let the
// flawed reply pass, or do not pass the right one.
type Critic func(ctx context.Context, t CriticTurn) ([]harness.Message, error)

// NewHookCritic is a Critic that plays the turn in a runtime session
// with the plugins loaded in sb: the teacher's tool results are replayed
// and every hook of the harness runs as served. Data built with it shows
// the model the feedback its own harness's hooks write
// (DataConfig.FeedbackShare).
func NewHookCritic(sb *runtime.Sandbox) Critic {
	return func(ctx context.Context, t CriticTurn) ([]harness.Message, error) {
		catalog, err := t.Room.CatalogJSON()
		if err != nil {
			return nil, err
		}
		// A fixed evening: the hooks' clock must not make data depend on
		// when it was built.
		ps, err := sb.Plugins(catalog, func() time.Time { return time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC) })
		if err != nil {
			return nil, err
		}
		script := &scriptedTurn{t: t}
		for _, m := range t.Messages {
			switch {
			case m.Role == harness.RoleAssistant && len(m.ToolCalls) > 0:
				script.rounds = append(script.rounds, m)
			case m.Role == harness.RoleTool && m.Name != t.Harness.LoadSkillToolName():
				script.results = append(script.results, json.RawMessage(m.Content))
			}
		}
		s, err := runtime.NewSession(ctx, runtime.Config{Stream: "data", Harness: t.Harness, Model: script,
			Plugins: &replayedTools{PluginSet: ps, script: script}, Logger: slog.New(slog.DiscardHandler), TurnTimeout: 30 * time.Second,
			Queue: runtime.QueueConfig{StaleAfter: time.Hour}, Context: func() []harness.ContextItem { return t.Context }})
		if err != nil {
			return nil, err
		}
		defer s.Close()
		events := s.Listen(64)
		if err := s.Submit(runtime.Message{Viewer: t.Question.Viewer, Text: t.Question.Text}); err != nil {
			return nil, err
		}
		for e := range events {
			if e.Kind != runtime.EventTurn {
				continue
			}
			turn := e.Record
			retried := slices.ContainsFunc(turn.Steps, func(st runtime.Step) bool { return st.Kind == "retry" })
			if turn.Outcome != runtime.OutcomeReplied || turn.Reply != t.Right || !retried || len(turn.Messages) < 2 {
				return nil, nil
			}
			return turn.Messages[1:], nil
		}
		return nil, errors.New("sft: the critic's session ended without a turn")
	}
}

// scriptedTurn is the model of a critic's session: the teacher's tool
// rounds, then the flawed reply, then the right one.
type scriptedTurn struct {
	t       CriticTurn
	rounds  []harness.Message
	results []json.RawMessage
	calls   int // generations so far
	tools   int // tool results replayed so far
}

func (s *scriptedTurn) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	defer func() { s.calls++ }()
	switch {
	case s.calls < len(s.rounds):
		return runtime.Response{Content: s.rounds[s.calls].Content, ToolCalls: s.rounds[s.calls].ToolCalls}, nil
	case s.calls == len(s.rounds):
		return runtime.Response{Content: s.t.Flawed}, nil
	}
	return runtime.Response{Content: s.t.Right}, nil
}

// replayedTools serves the teacher's tool results in order and runs the
// hooks and computed skills of the plugins.
type replayedTools struct {
	*runtime.PluginSet
	script *scriptedTurn
}

func (r *replayedTools) Tool(ctx context.Context, plugin, export string, args json.RawMessage) (json.RawMessage, error) {
	if r.script.tools >= len(r.script.results) {
		return nil, fmt.Errorf("sft: the critic's script has no result for call %d (%s)", r.script.tools+1, export)
	}
	r.script.tools++
	return r.script.results[r.script.tools-1], nil
}

// numberRE finds the numbers of a reply.
var numberRE = regexp.MustCompile(`\d+(?:\.\d+)?`)

// flawedReply writes the kind of first draft a compact model gets wrong
// for a turn whose right reply is reply: the right reply with a number
// off ("现在206元" for 199), or, for a reply without one (a material, an
// allergen), the price of the item looked up ("是117 yuan" asked for an
// ingredient). It returns "" when it can write neither.
func flawedReply(q liveroom.Question, msgs []harness.Message, reply string) string {
	if loc := numberRE.FindStringIndex(reply); loc != nil {
		n, err := strconv.ParseFloat(reply[loc[0]:loc[1]], 64)
		if err != nil {
			return ""
		}
		return reply[:loc[0]] + strconv.FormatFloat(n+7, 'f', -1, 64) + reply[loc[1]:]
	}
	for _, m := range msgs {
		var r struct {
			Name  string `json:"name"`
			Price string `json:"price"`
		}
		if m.Role != harness.RoleTool || json.Unmarshal([]byte(m.Content), &r) != nil || r.Price == "" || r.Name == "" {
			continue
		}
		if q.Lang == liveroom.LangZH {
			return r.Name + "直播间价格" + r.Price + "元。"
		}
		return "It is " + r.Price + " yuan in the live room."
	}
	return ""
}

// withFeedback turns a right transcript (msgs, after the viewer's message)
// into one whose first reply is flawed, with the hooks' feedback and then
// the right reply, through critic. It returns msgs unchanged, and false,
// when no flaw can be written or the hooks do not send it back.
func withFeedback(ctx context.Context, critic Critic, h *harness.Harness, room *liveroom.Room, q liveroom.Question, msgs []harness.Message,
	streamContext []harness.ContextItem) ([]harness.Message, bool, error) {
	last := len(msgs) - 1
	if last < 0 || msgs[last].Role != harness.RoleAssistant || msgs[last].Content == "" || len(msgs[last].ToolCalls) > 0 {
		return msgs, false, nil
	}
	flawed := flawedReply(q, msgs[:last], msgs[last].Content)
	if flawed == "" || flawed == msgs[last].Content {
		return msgs, false, nil
	}
	out, err := critic(ctx, CriticTurn{Harness: h, Room: room, Question: q, Messages: msgs[:last], Context: streamContext, Flawed: flawed, Right: msgs[last].Content})
	if err != nil || out == nil {
		return msgs, false, err
	}
	return out, true, nil
}
