package rl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/liveroom"
	"github.com/livehat/livehat/trainer/nn"
	"github.com/livehat/livehat/trainer/nn/policy"
)

// TaskConfig chooses the environments rollouts run in.
type TaskConfig struct {
	// Seed makes the rooms, questions, variants and faults reproducible.
	Seed uint64 `json:"seed"`
	// Rooms is the number of live rooms questions are drawn from; Room
	// sizes their catalogs. QuestionTypes and Langs restrict the
	// questions (empty: all but spam, whose right answer is silence).
	Rooms         int                     `json:"rooms"`
	Room          liveroom.RoomConfig     `json:"room"`
	QuestionTypes []liveroom.QuestionType `json:"question_types,omitempty"`
	Langs         []liveroom.Lang         `json:"langs,omitempty"`
	// VariantShare of the tasks run under a harness freshly augmented
	// from the HSA training pool with Transforms families; the rest under
	// the original harness.
	VariantShare float64 `json:"variant_share"`
	Transforms   int     `json:"transforms"`
	// FaultShare of the tasks serve one of their gold tools through the
	// fault injector (timeout, malformed, denied or empty; transient or
	// persistent), with the gold adapted to the fault.
	FaultShare float64 `json:"fault_share"`
}

// DefaultTaskConfig returns the HSA-RL environment mix: half the rollouts
// under fresh variants of two transforms, one in five with a tool fault.
func DefaultTaskConfig() TaskConfig {
	return TaskConfig{Seed: 1, Rooms: 32, VariantShare: 0.5, Transforms: 2, FaultShare: 0.2}
}

func (c TaskConfig) validate() error {
	switch {
	case c.Rooms <= 0:
		return fmt.Errorf("rl: tasks need rooms, got %d", c.Rooms)
	case c.VariantShare < 0 || c.VariantShare > 1 || c.FaultShare < 0 || c.FaultShare > 1:
		return fmt.Errorf("rl: shares must lie in [0, 1], got variant %g and fault %g", c.VariantShare, c.FaultShare)
	case c.VariantShare > 0 && c.Transforms <= 0:
		return fmt.Errorf("rl: variants need at least one transform, got %d", c.Transforms)
	case c.Room.Variety < -1 || c.Room.Variety > 5:
		return fmt.Errorf("rl: room variety %d: want -1 (the first stages' rooms), 0 (plain rooms) to 5", c.Room.Variety)
	}
	return nil
}

// Task is one RL environment: a question in a live room, the harness the
// agent works under (the original or a variant, with its HSA record),
// the gold mapped to that harness, and the faults its tools are served
// with.
type Task struct {
	// ID names the task by its stream and index.
	ID string `json:"id"`
	// RoomSeed and RoomConfig regenerate the room (liveroom.NewRoom).
	RoomSeed   uint64              `json:"room_seed"`
	RoomConfig liveroom.RoomConfig `json:"room_config"`
	// Question is the viewer's message with its canonical gold, adapted
	// to the faults.
	Question liveroom.Question `json:"question"`
	// GoldCalls are the question's gold calls as the variant names them
	// (the canonical ones under the original harness).
	GoldCalls []hsa.Call `json:"gold_calls"`
	// Faults are served by the fault injector on the room's tools.
	Faults []liveroom.Fault `json:"faults,omitempty"`
	// HarnessVersion is the version of the harness the task runs under,
	// Record its HSA provenance (nil for the original harness).
	HarnessVersion string      `json:"harness_version"`
	Record         *hsa.Record `json:"hsa_record,omitempty"`

	room    *liveroom.Room
	harness *harness.Harness
	mapping *hsa.Mapping
}

// tasks builds environments from base.
type tasks struct {
	base *harness.Harness
	cfg  TaskConfig
}

// at returns the task with the given stream and index: every (stream,
// index) pair draws its own room, question, variant and fault, so each RL
// step sees fresh augmentations and the draw depends on nothing else.
func (ts tasks) at(stream uint64, index int) (Task, error) {
	rng := rand.New(rand.NewPCG(ts.cfg.Seed^stream*0x9e3779b97f4a7c15, uint64(index)))
	for range 64 {
		t, err := ts.draw(rng)
		if errors.Is(err, hsa.ErrNotApplicable) || errors.Is(err, errSilent) {
			continue
		}
		if err != nil {
			return Task{}, err
		}
		t.ID = fmt.Sprintf("s%d-t%d", stream, index)
		return t, nil
	}
	return Task{}, fmt.Errorf("rl: no applicable task in 64 draws for stream %d index %d", stream, index)
}

var errSilent = errors.New("silent question")

func (ts tasks) draw(rng *rand.Rand) (Task, error) {
	roomSeed := ts.cfg.Seed*1_000_003 + uint64(rng.IntN(ts.cfg.Rooms))
	room := liveroom.NewRoom(roomSeed, ts.cfg.Room)
	types := ts.cfg.QuestionTypes
	if len(types) == 0 {
		for _, t := range liveroom.QuestionTypes() {
			if t != liveroom.QSpam {
				types = append(types, t)
			}
		}
	}
	qs := room.Questions(rng.Uint64(), 1, liveroom.QuestionConfig{Types: types, Langs: ts.cfg.Langs})
	q := qs[0]
	if q.Gold.Silent {
		return Task{}, errSilent
	}
	t := Task{RoomSeed: roomSeed, RoomConfig: ts.cfg.Room, room: room, harness: ts.base}
	if rng.Float64() < ts.cfg.FaultShare {
		var tools []string
		for _, c := range q.Gold.Calls {
			if c.Name != liveroom.ToolLoadSkill {
				tools = append(tools, c.Name)
			}
		}
		if len(tools) > 0 {
			kinds := liveroom.FaultKinds()
			f := liveroom.Fault{Tool: tools[rng.IntN(len(tools))], Kind: kinds[rng.IntN(len(kinds))], Times: rng.IntN(2)}
			t.Faults = []liveroom.Fault{f}
			q = q.WithFault(f, room)
		}
	}
	t.Question = q
	if rng.Float64() < ts.cfg.VariantShare {
		v, rec, err := hsa.Augment(ts.base, hsa.PoolTrain, rng.Int64(), ts.cfg.Transforms,
			hsa.Options{Gold: q.Gold.Calls, MinToolRounds: len(q.Gold.Calls)})
		if err != nil {
			return Task{}, err
		}
		m := rec.Mapping()
		t.harness, t.Record, t.mapping = v, &rec, &m
	}
	for _, c := range q.Gold.Calls {
		shown := c
		if t.mapping != nil {
			var err error
			if shown, err = t.mapping.Map(c); err != nil {
				return Task{}, fmt.Errorf("rl: map gold %s: %w", c.Name, err)
			}
		}
		t.GoldCalls = append(t.GoldCalls, shown)
	}
	t.HarnessVersion = t.harness.Version()
	return t, nil
}

// Prompt returns the task's chat messages (the rendered system prompt and
// the viewer's question) and tools, as the agent sees them.
func (t Task) Prompt() ([]chat.Message, []chat.Tool, error) {
	conv := harness.Conversation{Messages: []harness.Message{{Role: harness.RoleUser, Content: t.Question.Text}}}
	// The local engine lists tools through the chat template, as the
	// runtime and the SFT data do.
	p, err := harness.Render(t.harness, conv, harness.RenderOptions{OmitToolsSection: true})
	if err != nil {
		return nil, nil, fmt.Errorf("rl: render %s: %w", t.ID, err)
	}
	msgs := make([]chat.Message, len(p.Messages))
	for i, m := range p.Messages {
		msgs[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	tools := make([]chat.Tool, len(p.Tools))
	for i, s := range p.Tools {
		tools[i] = chat.Tool{Name: s.Function.Name, Description: s.Function.Description, Parameters: s.Function.Parameters}
	}
	return msgs, tools, nil
}

// callTool serves one call the agent made under the task's harness: the
// load-skill tool from the harness, the others from the room through the
// inverse mapping and the fault injector. Failures become the {"error": …}
// result the runtime shows a model.
func (t Task) callTool(inj *liveroom.FaultInjector, c chat.ToolCall) string {
	fail := func(msg string) string {
		b, _ := json.Marshal(map[string]string{"error": msg})
		return string(b)
	}
	var args map[string]any
	if err := json.Unmarshal(c.Arguments, &args); err != nil || args == nil {
		return fail(fmt.Sprintf("%s: arguments must be a JSON object", c.Name))
	}
	if c.Name == t.harness.LoadSkillToolName() {
		id, _ := args[t.harness.LoadSkillParamName()].(string)
		s, ok := t.harness.Skill(id)
		if !ok {
			return fail(fmt.Sprintf("no skill %q", id))
		}
		return harness.SkillContent(s)
	}
	call := hsa.Call{Name: c.Name, Arguments: args}
	if t.mapping != nil {
		back, err := t.mapping.Inverse(call)
		if err != nil {
			return fail(fmt.Sprintf("unknown tool %q", c.Name))
		}
		call = back
	}
	raw, err := inj.CallTool(call.Name, call.Arguments)
	if err != nil {
		return fail(err.Error())
	}
	return string(raw)
}

// Rollout is one episode of the agent in a task: the conversation as a
// training example (only the agent's tokens trained), its transcript, and
// what the grader and the length penalty made of it.
type Rollout struct {
	// Task is the index of the rollout's task in its step.
	Task int
	// Example is the whole conversation, the agent's tokens trained.
	Example nn.Example
	// Transcript is what the agent did after the question, in the
	// harness's message types, for the grader.
	Transcript []harness.Message
	Grade      liveroom.Grade
	// Generated counts the agent's tokens, Reasoning those inside
	// <think> blocks.
	Generated, Reasoning int
	// FormatErrors counts turns whose tool-call text did not parse.
	FormatErrors int
	// Truncated reports a turn cut at the token limit or the context.
	Truncated bool
}

// rolloutConfig bounds an episode.
type rolloutConfig struct {
	tok         *tokenizer.Tokenizer
	tmpl        chat.Template
	stop        int
	turnTokens  int
	maxTurns    int
	temperature float64
}

// episode is a rollout being played.
type episode struct {
	task  Task
	seed  uint64
	seq   *policy.Sequence
	inj   *liveroom.FaultInjector
	next  []int // context to append before the next turn
	turn  int
	roll  Rollout
	ended bool
}

// runAll plays one episode of each task (tasks[i] seeded by seeds[i]) in
// lockstep: every turn of all unfinished episodes is sampled in one
// batched decode loop, then each episode's tool calls are served and it
// either continues or ends. An episode's draws depend only on its seed
// and the batch it is played in.
func (rc rolloutConfig) runAll(ctx context.Context, sm *policy.Sampler, tasks []Task, seeds []uint64) ([]Rollout, error) {
	eps := make([]*episode, len(tasks))
	for i, t := range tasks {
		msgs, tools, err := t.Prompt()
		if err != nil {
			return nil, err
		}
		text, err := chat.Render(msgs, tools, chat.RenderOptions{Template: rc.tmpl, AddGenerationPrompt: true})
		if err != nil {
			return nil, fmt.Errorf("rl: %s: %w", t.ID, err)
		}
		eps[i] = &episode{task: t, seed: seeds[i], seq: sm.NewSequence(), inj: &liveroom.FaultInjector{Tools: t.room, Faults: t.Faults},
			next: rc.tok.EncodeWithSpecial(text)}
	}
	active := eps
	for len(active) > 0 {
		seqs := make([]*policy.Sequence, len(active))
		contexts := make([][]int, len(active))
		opts := make([]policy.Options, len(active))
		for i, e := range active {
			seqs[i], contexts[i] = e.seq, e.next
			opts[i] = policy.Options{MaxTokens: rc.turnTokens, Temperature: rc.temperature, Seed: e.seed*7919 + uint64(e.turn)}
		}
		replies, err := policy.ExtendAll(ctx, seqs, contexts, opts)
		if err != nil {
			return nil, fmt.Errorf("rl: turn of %d episodes: %w", len(active), err)
		}
		var next []*episode
		for i, e := range active {
			rc.advance(e, replies[i], sm.MaxContext())
			if !e.ended {
				next = append(next, e)
			}
		}
		active = next
	}
	out := make([]Rollout, len(eps))
	for i, e := range eps {
		t := e.task
		e.roll.Grade = t.room.GradeTranscript(t.Question, e.roll.Transcript, liveroom.GradeOptions{Mapping: t.mapping, ReplyChars: t.harness.Pipeline.ReplyChars.Value})
		out[i] = e.roll
	}
	return out, nil
}

// advance records one sampled turn of an episode: a final reply ends it,
// tool calls are served and their results become the next turn's context.
func (rc rolloutConfig) advance(e *episode, reply []int, maxContext int) {
	r := &e.roll
	r.add(e.next, false)
	r.add(reply, true)
	r.Generated += len(reply)
	e.turn++
	ended := len(reply) > 0 && reply[len(reply)-1] == rc.stop
	if ended {
		reply = reply[:len(reply)-1]
	} else {
		r.Truncated = true
	}
	reasoning, answer := chat.SplitThinking(rc.tok.Decode(reply))
	if reasoning != "" {
		r.Reasoning += len(rc.tok.Encode(reasoning))
	}
	content, calls, perr := chat.ParseAssistant(answer)
	if perr != nil {
		// The serving engine constrains a call to valid JSON once
		// <tool_call> opens, so broken call text never reaches a viewer:
		// the episode ends without a spoken reply. Graded as speech it
		// would earn Effectiveness for garbage.
		r.FormatErrors++
		r.Transcript = append(r.Transcript, harness.Message{Role: harness.RoleAssistant})
		e.ended = true
		return
	}
	if len(calls) == 0 || !ended || e.turn >= rc.maxTurns {
		r.Transcript = append(r.Transcript, harness.Message{Role: harness.RoleAssistant, Content: content})
		e.ended = true
		return
	}
	am := harness.Message{Role: harness.RoleAssistant, Content: content}
	for _, c := range calls {
		am.ToolCalls = append(am.ToolCalls, harness.ToolCall{Name: c.Name, Arguments: c.Arguments})
	}
	r.Transcript = append(r.Transcript, am)
	var b strings.Builder
	b.WriteString("\n<|im_start|>user")
	for _, c := range calls {
		res := e.task.callTool(e.inj, c)
		r.Transcript = append(r.Transcript, harness.Message{Role: harness.RoleTool, Name: c.Name, Content: res})
		b.WriteString("\n<tool_response>\n" + res + "\n</tool_response>")
	}
	b.WriteString("<|im_end|>\n<|im_start|>assistant\n")
	e.next = rc.tok.EncodeWithSpecial(b.String())
	if e.seq.Len()+len(e.next) >= maxContext {
		r.Truncated = true
		e.ended = true
	}
}

// add appends tokens to the rollout's example.
func (r *Rollout) add(tokens []int, train bool) {
	r.Example.Tokens = append(r.Example.Tokens, tokens...)
	for range tokens {
		r.Example.Train = append(r.Example.Train, train)
	}
}
