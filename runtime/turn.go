package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/plugins"
)

// Outcome is how a turn ended.
type Outcome string

// Turn outcomes.
const (
	// OutcomeReplied: the reply passed every hook and was spoken.
	OutcomeReplied Outcome = "replied"
	// OutcomeDenied: a hook denied the viewer message; nothing was said.
	OutcomeDenied Outcome = "denied"
	// OutcomeSafeLine: the turn could not produce an acceptable reply (a
	// fail-closed hook, the model failed, the retry budget ran out), so the
	// session's safe line was spoken instead.
	OutcomeSafeLine Outcome = "safe_line"
	// OutcomeCancelled: the session stopped during the turn.
	OutcomeCancelled Outcome = "cancelled"
)

// Step is one traced step of a turn.
type Step struct {
	// Kind is "hook", "model", "tool", "skill", "retry" or "limit".
	Kind string `json:"kind"`
	// Name is the hook, tool or skill name, or the event.
	Name  string            `json:"name,omitempty"`
	Event harness.HookEvent `json:"event,omitempty"`
	// Viewer is whose message a viewer_message hook screened, in a turn
	// that took up several.
	Viewer   string                `json:"viewer,omitempty"`
	Decision *harness.HookDecision `json:"decision,omitempty"`
	Input    json.RawMessage       `json:"input,omitempty"`
	Output   string                `json:"output,omitempty"`
	Error    string                `json:"error,omitempty"`
	Start    time.Duration         `json:"start_ns"`
	Took     time.Duration         `json:"took_ns"`
}

// Timing is where a turn's time went.
type Timing struct {
	Queue      time.Duration `json:"queue_ns"`
	Hooks      time.Duration `json:"hooks_ns"`
	Render     time.Duration `json:"render_ns"`
	Prefill    time.Duration `json:"prefill_ns"`
	Decode     time.Duration `json:"decode_ns"`
	Model      time.Duration `json:"model_ns"`
	Tools      time.Duration `json:"tools_ns"`
	FirstChunk time.Duration `json:"first_chunk_ns"`
	Total      time.Duration `json:"total_ns"`
	// PromptTokens, CachedTokens and CompletionTokens add up over the
	// turn's generations.
	PromptTokens     int `json:"prompt_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Turn is the record of one answered (or refused) viewer message or
// narration tick: what came in, what was said, every step and its timing.
type Turn struct {
	ID             string            `json:"id"`
	Session        string            `json:"session"`
	HarnessVersion string            `json:"harness_version"`
	Event          harness.HookEvent `json:"event"`
	// Viewers are the viewers the reply addresses (those whose message no
	// hook denied; all of them when the whole turn was denied).
	Viewers []string `json:"viewers,omitempty"`
	// Input is the text of each question the turn took up, one a line.
	Input string `json:"input"`
	// Asked is every message the turn took up, near-duplicates and
	// batched questions included, with what the viewer_message hooks made
	// of each.
	Asked  []Asked  `json:"asked,omitempty"`
	Reply  string   `json:"reply"`
	Chunks []string `json:"chunks,omitempty"`
	// Actions are what the avatar does while it speaks the reply.
	Actions  []AvatarAction    `json:"actions,omitempty"`
	Outcome  Outcome           `json:"outcome"`
	Reason   string            `json:"reason,omitempty"`
	Messages []harness.Message `json:"messages"`
	Steps    []Step            `json:"steps"`
	Timing   Timing            `json:"timing"`
}

// Asked is one viewer message a turn took up.
type Asked struct {
	Viewer string `json:"viewer"`
	Text   string `json:"text"`
	// Question numbers the turn's distinct questions from 0: messages
	// merged as near-duplicates share one, batched questions do not.
	Question int `json:"question"`
	// Waited is how long the message was queued before the turn started.
	Waited time.Duration `json:"waited_ns"`
	// Denied is why a viewer_message hook refused the message; the turn
	// answers the others. Empty when it was allowed.
	Denied string `json:"denied,omitempty"`
}

// AvatarAction is something the avatar does while it speaks: show an
// item on screen, point at the pinned purchase link.
type AvatarAction struct {
	// Kind is "show_item" or "point_at_link", or what a tool names.
	Kind string `json:"kind"`
	Item string `json:"item_id,omitempty"`
}

// actionsOf reads the avatar actions a tool result implies. A tool may
// name one explicitly ({"avatar_action": {"kind": …, "item_id": …}});
// otherwise a result about one item shows it, and a pinned link is
// pointed at.
func actionsOf(result []byte) []AvatarAction {
	var r struct {
		ItemID string        `json:"item_id"`
		Pinned bool          `json:"pinned"`
		Action *AvatarAction `json:"avatar_action"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	switch {
	case r.Action != nil && r.Action.Kind != "":
		return []AvatarAction{*r.Action}
	case r.Pinned && r.ItemID != "":
		return []AvatarAction{{Kind: "point_at_link", Item: r.ItemID}}
	case r.ItemID != "":
		return []AvatarAction{{Kind: "show_item", Item: r.ItemID}}
	}
	return nil
}

// turnRunner runs one turn against a fixed harness version.
type turnRunner struct {
	s     *Session
	h     *harness.Harness
	turn  *Turn
	start time.Time
	// injected is hook context for this turn.
	injected []harness.InjectedContext
	// items caches the stream's catalog ids for the turn; see catalogItems.
	items []string
	// words caches what an item query may say this turn; see queryWords.
	words []string
	// named is whether the viewer's message names a catalog item, set
	// with words.
	named bool
	// replySkillDue is set while a viewer's turn has yet to load the reply
	// skill its rule requires: a load is then held to reply skills.
	replySkillDue bool
	// variants caches the catalog's variant names for the turn; see
	// catalogVariants.
	variants []string
	// viewerText is the turn's user message, whose spans a query may name.
	viewerText string
	// calls are the turn's tool calls with their results, in order, for
	// the after_response hooks (a grounding check reads them).
	calls []plugins.ToolCall
	// minted counts the tool-call ids the turn made (identify).
	minted int
}

func (r *turnRunner) since() time.Duration { return time.Since(r.start) }

func (r *turnRunner) step(st Step) { r.turn.Steps = append(r.turn.Steps, st) }

// hooksFor returns the hooks of an event in order (stable by position for
// equal orders).
func hooksFor(h *harness.Harness, e harness.HookEvent) []harness.Hook {
	var out []harness.Hook
	for _, k := range h.Hooks {
		if k.Event == e {
			out = append(out, k)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Order < out[j].Order })
	return out
}

// hookResult is the combined outcome of the hooks of one event.
type hookResult struct {
	denied    bool
	reason    string
	text      string          // rewritten text, if any
	arguments json.RawMessage // rewritten tool arguments, if any
	retry     string          // feedback, if a hook asked for a retry
	call      string          // the export the retry's answer must call, if any
}

// runHooks runs every hook of an event in order. A deny or retry stops the
// chain; rewrites feed the next hook; injections collect for the model.
// A hook that fails is treated as its failure policy says.
func (r *turnRunner) runHooks(ctx context.Context, e harness.HookEvent, in plugins.HookInput) hookResult {
	res := hookResult{text: in.Text}
	for _, k := range hooksFor(r.h, e) {
		in.Event = e
		in.Text = res.text
		in.Config = k.Config
		in.ReplyChars = r.h.Pipeline.ReplyChars.Value
		if res.arguments != nil && in.Tool != nil {
			in.Tool.Arguments = res.arguments
		}
		raw, err := json.Marshal(in)
		t0 := time.Now()
		st := Step{Kind: "hook", Name: k.Name, Event: e, Start: r.since()}
		if e == harness.EventViewerMessage && len(r.turn.Asked) > 1 && in.Viewer != nil {
			st.Viewer = in.Viewer.ID
		}
		var d harness.HookDecision
		if err == nil {
			d, err = r.s.cfg.Plugins.Hook(ctx, k.Plugin, k.Export, raw)
		}
		if err == nil {
			err = d.Validate()
		}
		st.Took = time.Since(t0)
		r.turn.Timing.Hooks += st.Took
		if err != nil {
			st.Error = err.Error()
			if k.OnFailure == harness.FailClosed {
				d = harness.HookDecision{Action: harness.ActionDeny, Reason: fmt.Sprintf("hook %s failed (fail_closed): %v", k.Name, err)}
			} else {
				d = harness.HookDecision{Action: harness.ActionAllow}
			}
		}
		st.Decision = &d
		r.step(st)
		switch d.Action {
		case harness.ActionDeny:
			res.denied, res.reason = true, d.Reason
			return res
		case harness.ActionRetry:
			res.retry, res.call = d.Feedback, d.Call
			return res
		case harness.ActionRewrite:
			if d.Text != "" {
				res.text = d.Text
			}
			if len(d.Arguments) > 0 {
				res.arguments = d.Arguments
			}
		case harness.ActionInject:
			ic := harness.InjectedContext{Source: k.Name, Text: d.Context}
			if !slices.Contains(r.injected, ic) { // screening several messages may inject the same twice
				r.injected = append(r.injected, ic)
			}
		}
	}
	return res
}

// identify gives each call of a reply an id no other call of the
// conversation has, so a server that pairs results with calls by id (the
// OpenAI format) gets each result back with its own call. The server's id
// is kept; a call without one (the in-process model, a call recovered from
// the reply's text) or with one an earlier call already has gets
// "call_<turn>_<n>", n counting the turn's calls. The ids are stored with
// the turn and never rendered into ChatML.
func (r *turnRunner) identify(calls []harness.ToolCall, msgs []harness.Message) []harness.ToolCall {
	used := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID != "" {
				used[c.ID] = true
			}
		}
	}
	turn, _, _ := strings.Cut(r.turn.ID, "-") // a UUID's first group is enough within one conversation
	out := make([]harness.ToolCall, len(calls))
	for i, c := range calls {
		for c.ID == "" || used[c.ID] {
			c.ID = fmt.Sprintf("call_%s_%d", turn, r.minted)
			r.minted++
		}
		used[c.ID] = true
		out[i] = c
	}
	return out
}

// recordCall keeps a plugin tool's call and result for the after_response
// hooks. Loading a skill is the harness's own business, not a fact source.
func (r *turnRunner) recordCall(call harness.ToolCall, result string) {
	if call.Name == r.h.LoadSkillToolName() {
		return
	}
	c := plugins.ToolCall{Name: call.Name, Arguments: call.Arguments, Result: json.RawMessage(result)}
	if tool, ok := r.h.Tool(call.Name); ok {
		c.Plugin, c.Export = tool.Plugin, tool.Export
	}
	if len(c.Arguments) > 0 && !json.Valid(c.Arguments) {
		c.Arguments, _ = json.Marshal(string(call.Arguments))
	}
	r.calls = append(r.calls, c)
}

// narrationPrefix starts the user message of a turn no viewer asked.
const narrationPrefix = "(host strategy, no viewer asked) "

// replyLang is the language a reply to message must be in: "zh" when the
// viewer wrote any Chinese, else "en". A narration turn speaks the
// language of the session's last viewer (history), else the stream's
// (streamLang), else that of the strategy's instruction.
func replyLang(message string, history []harness.Message, streamLang string) string {
	if instruction, ok := strings.CutPrefix(message, narrationPrefix); ok {
		message = ""
		for i := len(history) - 1; i >= 0 && message == ""; i-- {
			if m := history[i]; m.Role == harness.RoleUser && !strings.HasPrefix(m.Content, narrationPrefix) {
				message = m.Content
			}
		}
		switch {
		case message != "":
		case streamLang != "":
			return streamLang
		default:
			message = instruction
		}
	}
	for _, c := range message {
		if unicode.Is(unicode.Han, c) {
			return "zh"
		}
	}
	return "en"
}

// errTurnCancelled marks a turn stopped by its context.
var errTurnCancelled = errors.New("turn cancelled")

// run executes the turn loop for one turn's questions. history is the
// session's conversation memory; the returned turn holds the new messages.
func (r *turnRunner) run(ctx context.Context, batch []input, history []harness.Message) {
	t := r.turn
	userText, viewer, questions := r.screen(ctx, batch)
	if viewer == nil {
		return
	}
	// A reply to several questions needs room for each answer.
	maxTokens := r.s.cfg.MaxTokens * questions
	msgs := append([]harness.Message(nil), history...)
	msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: userText})
	r.viewerText = userText
	turnStart := len(msgs) - 1

	limits := r.h.Pipeline
	rounds, retries := 0, 0
	skillLoaded := false
	// mustCall is a call the pipeline's rule demands of the next answer.
	mustCall := ""
	lang := replyLang(userText, history, r.s.cfg.Lang)
	var streamCtx []harness.ContextItem // what the model saw, for the hooks
	for {
		if err := ctx.Err(); err != nil {
			t.Outcome, t.Reason = OutcomeCancelled, err.Error()
			return
		}
		t0 := time.Now()
		opts := harness.RenderOptions{OmitToolsSection: appliesToolTemplate(r.s.cfg.Model)}
		streamCtx = r.s.context()
		prompt, err := harness.Render(r.h, harness.Conversation{Context: streamCtx, Messages: msgs, Injected: r.injected}, opts)
		t.Timing.Render += time.Since(t0)
		if err != nil {
			r.safeLine(msgs[turnStart:], "render: "+err.Error())
			return
		}
		if bm := r.runHooks(ctx, harness.EventBeforeModel, plugins.HookInput{Stream: r.s.cfg.Stream, Session: r.s.id, Viewer: viewer, Text: userText}); bm.denied {
			r.safeLine(msgs[turnStart:], "before_model: "+bm.reason)
			return
		}
		if len(r.injected) > 0 { // before_model hooks may have added context
			prompt, err = harness.Render(r.h, harness.Conversation{Context: streamCtx, Messages: msgs, Injected: r.injected}, opts)
			if err != nil {
				r.safeLine(msgs[turnStart:], "render: "+err.Error())
				return
			}
		}
		tools := prompt.Tools
		if rounds >= limits.ToolRounds.Value {
			// Out of tool rounds: the model must answer with what it has.
			tools = nil
		}
		t0 = time.Now()
		st := Step{Kind: "model", Start: r.since()}
		r.replySkillDue = limits.RequireReplySkill && !skillLoaded && hasReplySkill(r.h) && !strings.HasPrefix(userText, narrationPrefix)
		callTools, err := r.callTools(tools)
		if err != nil {
			r.safeLine(msgs[turnStart:], "tools: "+err.Error())
			return
		}
		if limits.RequireReplySkill && !skillLoaded && rounds == 0 && hasReplySkill(r.h) {
			// The rule wants a reply skill before any reply, so the turn
			// opens with the load: the model chooses the skill first.
			mustCall = r.h.LoadSkillToolName()
		}
		if mustCall == "" && rounds == 1 && skillLoaded {
			// A question that names a catalog item is answered from its
			// lookup: the call after the reply skill is the lookup, and the
			// model writes the query.
			mustCall = r.lookupDue()
		}
		if !offered(tools, mustCall) {
			mustCall = ""
		}
		resp, err := r.s.cfg.Model.Generate(ctx, Request{Messages: prompt.Messages, Tools: tools, CallTools: callTools,
			MustCall: mustCall, MaxTokens: maxTokens, Since: r.start.Add(-t.Timing.Queue)})
		mustCall = ""
		st.Took = time.Since(t0)
		t.Timing.Model += st.Took
		t.Timing.Prefill += resp.Usage.Prefill
		t.Timing.Decode += resp.Usage.Decode
		t.Timing.PromptTokens += resp.Usage.PromptTokens
		t.Timing.CachedTokens += resp.Usage.CachedTokens
		t.Timing.CompletionTokens += resp.Usage.CompletionTokens
		if err != nil {
			st.Error = err.Error()
			r.step(st)
			if ctx.Err() != nil {
				t.Outcome, t.Reason = OutcomeCancelled, ctx.Err().Error()
				return
			}
			if errors.Is(err, ErrAnswerRefused) && retries < limits.Retries.Value {
				// The same prompt would write the same answer: the
				// feedback changes it, inside the retry budget.
				retries++
				r.step(Step{Kind: "retry", Start: r.since(), Output: answerRefusedFeedback})
				msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: r.h.RetryMessage(answerRefusedFeedback)})
				continue
			}
			r.safeLine(msgs[turnStart:], "model: "+err.Error())
			return
		}
		st.Output = resp.Content
		if resp.Reasoning != "" {
			st.Output = "<think>" + resp.Reasoning + "</think>" + resp.Content
		}
		r.step(st)

		if len(resp.ToolCalls) > 0 && tools != nil {
			rounds++
			calls := r.identify(resp.ToolCalls, msgs)
			msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, Content: resp.Content, ToolCalls: calls})
			for _, call := range calls {
				result, loadedReply := r.callTool(ctx, viewer, call)
				skillLoaded = skillLoaded || loadedReply
				r.recordCall(call, result)
				msgs = append(msgs, harness.Message{Role: harness.RoleTool, Name: call.Name, ToolCallID: call.ID, Content: result})
			}
			continue
		}
		if len(resp.ToolCalls) > 0 {
			r.step(Step{Kind: "limit", Name: "tool_rounds", Start: r.since(), Error: fmt.Sprintf("tool calls after the %d-round limit were ignored", limits.ToolRounds.Value)})
		}
		reply := strings.TrimSpace(resp.Content)
		msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, Content: reply})

		// The harness rule: a reply skill must be loaded before a final reply.
		feedback := ""
		if limits.RequireReplySkill && !skillLoaded && hasReplySkill(r.h) {
			// The model is told, and its next answer is the load: a model
			// that does not know the renamed loader by its name would
			// otherwise spend every retry answering again.
			feedback, mustCall = r.h.ReplySkillFeedback(), r.h.LoadSkillToolName()
		} else if reply == "" {
			feedback = "Your reply was empty. Answer the viewer."
			if retries >= limits.Retries.Value {
				// The last attempt said nothing: the after_response hooks
				// may answer from the turn's results (the grounding check
				// does) before the safe line is spoken.
				ar := r.runHooks(ctx, harness.EventAfterResponse, plugins.HookInput{Stream: r.s.cfg.Stream, Session: r.s.id, Viewer: viewer,
					Message: userText, Lang: lang, Calls: r.calls, Context: streamCtx, Attempt: retries + 1, Attempts: limits.Retries.Value + 1})
				if text := strings.TrimSpace(ar.text); !ar.denied && ar.retry == "" && text != "" {
					msgs[len(msgs)-1].Content = text
					t.Messages = msgs[turnStart:]
					r.emit(text, OutcomeReplied, "")
					return
				}
			}
		} else {
			ar := r.runHooks(ctx, harness.EventAfterResponse, plugins.HookInput{Stream: r.s.cfg.Stream, Session: r.s.id, Viewer: viewer,
				Text: reply, Message: userText, Lang: lang, Calls: r.calls, Context: streamCtx,
				Attempt: retries + 1, Attempts: limits.Retries.Value + 1})
			switch {
			case ar.denied:
				r.safeLine(msgs[turnStart:], "after_response: "+ar.reason)
				return
			case ar.retry != "":
				feedback = ar.retry
				if ar.call != "" {
					// A hook that finds the fact asked missing names the
					// call that gives it; a tool the harness does not have
					// leaves the answer to the model.
					mustCall, _ = r.h.ToolRunning(ar.call)
				}
			default:
				reply = ar.text
				msgs[len(msgs)-1].Content = reply
				t.Messages = msgs[turnStart:]
				r.emit(reply, OutcomeReplied, "")
				return
			}
		}
		if retries >= limits.Retries.Value {
			r.safeLine(msgs[turnStart:], "retry budget spent: "+feedback)
			return
		}
		retries++
		r.step(Step{Kind: "retry", Start: r.since(), Output: feedback})
		msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: r.h.RetryMessage(feedback)})
	}
}

// offered reports whether name is one of the tools.
func offered(tools []harness.FunctionSpec, name string) bool {
	return name != "" && slices.ContainsFunc(tools, func(t harness.FunctionSpec) bool { return t.Function.Name == name })
}

// answerRefusedFeedback is what the model reads after its server refused
// its answer (ErrAnswerRefused).
const answerRefusedFeedback = "it could not be read. Write it again in plain words, or as a tool call in the format the tools section shows."

// screen runs the viewer_message (or narration_tick) hooks on every
// message of the turn, each as its own viewer's, and renders what they
// allowed as the turn's user message. It returns the viewer the later
// hooks see (the first allowed), or nil when every message was denied,
// and how many questions the message asks.
func (r *turnRunner) screen(ctx context.Context, batch []input) (string, *plugins.Viewer, int) {
	t := r.turn
	type question struct {
		text    string
		viewers []string
	}
	qs := make([]question, len(batch))
	var first *plugins.Viewer
	for i := range t.Asked {
		a := &t.Asked[i]
		v := &plugins.Viewer{ID: a.Viewer}
		// Each message is screened as written: a near-duplicate may carry
		// what its question's first message did not.
		res := r.runHooks(ctx, batch[a.Question].event, plugins.HookInput{Stream: r.s.cfg.Stream, Session: r.s.id, Viewer: v, Text: a.Text})
		if res.denied {
			a.Denied = res.reason
			if a.Denied == "" {
				a.Denied = "denied by a viewer_message hook"
			}
			continue
		}
		q := &qs[a.Question]
		if q.text == "" {
			q.text = res.text
		}
		q.viewers = append(q.viewers, a.Viewer)
		t.Viewers = append(t.Viewers, a.Viewer)
		if first == nil {
			first = v
		}
	}
	if first == nil {
		t.Outcome, t.Reason = OutcomeDenied, t.Asked[0].Denied
		for _, a := range t.Asked {
			t.Viewers = append(t.Viewers, a.Viewer)
		}
		return "", nil, 0
	}
	if batch[0].event == harness.EventNarrationTick {
		// Nobody asked: the model must know it speaks on its own initiative.
		return narrationPrefix + qs[0].text, first, 1
	}
	var lines []string
	for _, q := range qs {
		switch {
		case len(q.viewers) == 0: // every message of this question was denied
		case len(q.viewers) == 1 && len(batch) == 1:
			lines = append(lines, q.text)
		case len(q.viewers) == 1:
			lines = append(lines, fmt.Sprintf("(%s) %s", q.viewers[0], q.text))
		default:
			lines = append(lines, fmt.Sprintf("(asked by %d viewers: %s) %s", len(q.viewers), strings.Join(q.viewers, ", "), q.text))
		}
	}
	if len(lines) == 1 {
		return lines[0], first, 1
	}
	for i := range lines {
		lines[i] = fmt.Sprintf("%d. %s", i+1, lines[i])
	}
	return fmt.Sprintf("(%d viewer questions at once; answer each, naming who asked)\n%s", len(lines), strings.Join(lines, "\n")), first, len(lines)
}

func hasReplySkill(h *harness.Harness) bool {
	for _, s := range h.Skills {
		if s.Kind == harness.SkillReply {
			return true
		}
	}
	return false
}

// callTool runs one tool call with its hooks and returns the result text
// the model reads. Errors become {"error": …} results, so the model can
// recover; it reports whether the call loaded a reply skill.
func (r *turnRunner) callTool(ctx context.Context, viewer *plugins.Viewer, call harness.ToolCall) (string, bool) {
	errResult := func(msg string) string {
		b, _ := json.Marshal(map[string]string{"error": msg})
		return string(b)
	}
	t0 := time.Now()
	defer func() { r.turn.Timing.Tools += time.Since(t0) }()
	if call.Name == r.h.LoadSkillToolName() && len(r.h.Skills) > 0 {
		return r.loadSkill(ctx, call)
	}
	tool, ok := r.h.Tool(call.Name)
	st := Step{Kind: "tool", Name: call.Name, Input: call.Arguments, Start: r.since()}
	if !ok {
		st.Error = "unknown tool"
		r.step(st)
		return errResult(fmt.Sprintf("unknown tool %q", call.Name)), false
	}
	args := call.Arguments
	if err := r.validateArgs(tool, args); err != nil {
		st.Error = err.Error()
		r.step(st)
		return errResult(err.Error()), false
	}
	bt := r.runHooks(ctx, harness.EventBeforeTool, plugins.HookInput{Stream: r.s.cfg.Stream, Session: r.s.id, Viewer: viewer,
		Tool: &plugins.ToolCall{Name: call.Name, Arguments: args}})
	if bt.denied {
		st.Error = "denied by hook: " + bt.reason
		r.step(st)
		return errResult("the call was refused: " + bt.reason), false
	}
	if bt.arguments != nil {
		if err := r.validateArgs(tool, bt.arguments); err != nil {
			st.Error = "hook rewrote invalid arguments: " + err.Error()
			r.step(st)
			return errResult("the tool could not run"), false
		}
		args = bt.arguments
		st.Input = args
	}
	// The plugin receives its own argument names; hooks and the trace
	// keep the harness's, which the model wrote.
	pluginArgs, err := tool.PluginArguments(args)
	if err != nil {
		st.Error = err.Error()
		r.step(st)
		return errResult(err.Error()), false
	}
	ctxTool, cancel := context.WithTimeout(ctx, r.s.cfg.ToolTimeout)
	out, err := r.s.cfg.Plugins.Tool(ctxTool, tool.Plugin, tool.Export, pluginArgs)
	cancel()
	st.Took = time.Since(t0)
	if err != nil {
		trace, forModel := toolFailure(tool, pluginArgs, err)
		st.Error = trace
		r.step(st)
		return errResult(forModel), false
	}
	if !json.Valid(out) {
		// Garbage from a plugin never reaches the model as if it were data.
		st.Error = "tool returned malformed JSON"
		r.step(st)
		return errResult(fmt.Sprintf("%s returned malformed output", call.Name)), false
	}
	st.Output = string(out)
	r.step(st)
	r.addActions(actionsOf(out))
	at := r.runHooks(ctx, harness.EventAfterTool, plugins.HookInput{Stream: r.s.cfg.Stream, Session: r.s.id, Viewer: viewer,
		Tool: &plugins.ToolCall{Name: call.Name, Arguments: args, Result: out}})
	switch {
	case at.denied:
		return errResult("the result was withheld: " + at.reason), false
	case at.text != "":
		return at.text, false
	}
	return string(out), false
}

func (r *turnRunner) loadSkill(ctx context.Context, call harness.ToolCall) (string, bool) {
	st := Step{Kind: "skill", Input: call.Arguments, Start: r.since()}
	defer func() { r.step(st) }()
	var args map[string]any
	_ = json.Unmarshal(call.Arguments, &args)
	id, _ := args[r.h.LoadSkillParamName()].(string)
	st.Name = id
	s, ok := r.h.Skill(id)
	if !ok {
		st.Error = "unknown skill"
		b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf("no skill %q; the skills are listed in the prompt", id)})
		return string(b), false
	}
	content := harness.SkillContent(s)
	if s.Plugin != "" {
		in, _ := json.Marshal(map[string]any{"skill": s.ID, "stream": r.s.cfg.Stream, "session": r.s.id})
		extra, err := r.s.cfg.Plugins.Skill(ctx, s.Plugin, s.Export, in)
		if err != nil {
			st.Error = err.Error()
		} else if extra != "" {
			content = strings.TrimSpace(content + "\n\n" + extra)
		}
	}
	st.Output = content
	return content, s.Kind == harness.SkillReply
}

// schemaFailure is the validator's preamble in a plugin's input
// rejection: it names the schema's resource (a temporary file of the
// plugin host), which says nothing to the person who reads the trace.
var schemaFailure = regexp.MustCompile(`jsonschema validation failed with '[^']*'\s*`)

// schemaPlace is where the validator says a problem is ("- at '/x':");
// the top level (an empty path) needs no saying.
var schemaPlace = regexp.MustCompile(`\s*-?\s*at '([^']*)':\s*`)

// toolFailure words a failed plugin call of a harness tool: for the trace,
// naming the harness tool, the plugin and its export (and, for refused
// arguments, what the plugin received); for the model, in the argument
// names it wrote.
func toolFailure(tool harness.Tool, pluginArgs json.RawMessage, err error) (trace, forModel string) {
	var ce *plugins.CallError
	if !errors.As(err, &ce) || !errors.Is(err, plugins.ErrBadInput) {
		return fmt.Sprintf("tool %s (plugin %s): %v", tool.Name, tool.Plugin, err), fmt.Sprintf("%s failed: %v", tool.Name, err)
	}
	detail := schemaFailure.ReplaceAllString(ce.Detail, "")
	detail = schemaPlace.ReplaceAllStringFunc(detail, func(m string) string {
		if at := schemaPlace.FindStringSubmatch(m)[1]; at != "" {
			return "; at " + at + ": "
		}
		return "; "
	})
	detail = strings.Trim(detail, "; ")
	trace = fmt.Sprintf("tool %s (plugin %s, export %s) refused the arguments %s: %s", tool.Name, ce.Plugin, ce.Export, pluginArgs, detail)
	for _, m := range tool.ArgumentMap {
		detail = strings.ReplaceAll(detail, "'"+m.Plugin+"'", "'"+m.Name+"'")
	}
	return trace, fmt.Sprintf("%s refused its arguments: %s", tool.Name, detail)
}

// catalogItems returns the stream's item ids, read once per turn so that
// every round and every check of the turn sees the same catalog; nil when
// the stream has none.
func (r *turnRunner) catalogItems() []string {
	if r.items == nil && r.s.cfg.CatalogItems != nil {
		r.items = append([]string{}, r.s.cfg.CatalogItems()...)
	}
	return r.items
}

// queryWords returns what an item query may say this turn: the catalog's
// words and the spans of the viewer's message (viewerSpans) that find an
// item (findsItem), or all its spans when none does, read once per turn;
// nil when the stream gives no catalog words.
func (r *turnRunner) queryWords() []string {
	if r.words == nil && r.s.cfg.CatalogWords != nil {
		words := append([]string{}, r.s.cfg.CatalogWords()...)
		if len(words) == 0 {
			return nil
		}
		seen := make(map[string]bool, len(words))
		for _, w := range words {
			seen[w] = true
		}
		lower := make([]string, len(words))
		for i, w := range words {
			lower[i] = strings.ToLower(w)
		}
		// Spans that find no item are left out while some span finds
		// one; a message that names no item ("you are a scammer") keeps
		// them all, so that a lookup of its words finds nothing and says
		// so rather than a catalog word finding some item.
		spans := viewerSpans(r.viewerText)
		finding := slices.DeleteFunc(slices.Clone(spans), func(w string) bool { return !findsItem(w, lower) })
		if len(finding) > 0 {
			// The viewer named what to look up: the catalog's words
			// would let a query name an item no one asked about.
			spans, r.named, words = finding, true, nil
			clear(seen)
		}
		for _, w := range spans {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
		r.words = words
	}
	return r.words
}

// replySkillParameters returns the load-skill tool's parameters with the
// skill id held to the harness's reply skills.
func replySkillParameters(h *harness.Harness) json.RawMessage {
	var ids []string
	for _, s := range h.Skills {
		if s.Kind == harness.SkillReply {
			ids = append(ids, s.ID)
		}
	}
	raw, _ := json.Marshal(map[string]any{"type": "object", "required": []string{h.LoadSkillParamName()},
		"properties": map[string]any{h.LoadSkillParamName(): map[string]any{"type": "string", "enum": ids}}})
	return raw
}

// foundItems returns the catalog ids the turn's lookups (tools with query
// arguments) gave at the top of their results, in order; none before a
// lookup found something.
func (r *turnRunner) foundItems() []string {
	var out []string
	for _, c := range r.calls {
		t, ok := r.h.Tool(c.Name)
		if !ok || len(t.QueryArgs) == 0 {
			continue
		}
		var res struct {
			ItemID string `json:"item_id"`
		}
		if json.Unmarshal(c.Result, &res) == nil && slices.Contains(r.catalogItems(), res.ItemID) && !slices.Contains(out, res.ItemID) {
			out = append(out, res.ItemID)
		}
	}
	return out
}

// freshQueryWords returns queryWords less the words of the turn's
// lookups so far and those that hold or are held in one ("Sunscreen" of
// "Preoci Fresh Sunscreen"): looking the same item up again gives the same
// result, and a comparison's second lookup is of the other item. All of
// queryWords when nothing new would be left.
func (r *turnRunner) freshQueryWords() []string {
	words := r.queryWords()
	var used []string
	for _, c := range r.calls {
		t, ok := r.h.Tool(c.Name)
		if !ok || len(t.QueryArgs) == 0 {
			continue
		}
		var args map[string]any
		if json.Unmarshal(c.Arguments, &args) != nil {
			continue
		}
		for _, a := range t.QueryArgs {
			v, _ := harness.ArgValue(args, a)
			if q, _ := v.(string); q != "" {
				used = append(used, strings.ToLower(q))
			}
		}
	}
	if len(used) == 0 {
		return words
	}
	fresh := slices.DeleteFunc(slices.Clone(words), func(w string) bool {
		w = strings.ToLower(w)
		return slices.ContainsFunc(used, func(q string) bool { return strings.Contains(w, q) || strings.Contains(q, w) })
	})
	if len(fresh) == 0 {
		return words
	}
	return fresh
}

// lookupDue returns the harness's item lookup (the first tool with query
// arguments) when the turn must call it before answering: a viewer's
// message that names a catalog item (findsItem), in a turn that has not
// looked anything up. Empty otherwise.
func (r *turnRunner) lookupDue() string {
	if strings.HasPrefix(r.viewerText, narrationPrefix) || r.queryWords() == nil || !r.named {
		return ""
	}
	for _, c := range r.calls {
		if t, ok := r.h.Tool(c.Name); ok && len(t.QueryArgs) > 0 {
			return ""
		}
	}
	for _, t := range r.h.Tools {
		if len(t.QueryArgs) > 0 {
			return t.Name
		}
	}
	return ""
}

// catalogVariants returns the catalog's variant names, read once per
// turn: nil when the stream gives no list (the variant arguments keep
// their schema), empty when its catalog has no variant.
func (r *turnRunner) catalogVariants() []string {
	if r.variants == nil && r.s.cfg.CatalogVariants != nil {
		r.variants = append([]string{}, r.s.cfg.CatalogVariants()...)
		// The variants the viewer named, where they named some: a stock
		// check of "white earbuds" is of white, not the first colour.
		if named := slices.DeleteFunc(slices.Clone(r.variants), func(v string) bool { return !namesVariant(r.viewerText, v) }); len(named) > 0 {
			r.variants = named
		}
	}
	return r.variants
}

// callTools returns the offered tools with their catalog arguments held
// to the stream's item ids, their query arguments to queryWords and their
// variant arguments to catalogVariants, or nil when no offered tool has
// any (or the stream has no catalog), which leaves the tools' own schemas
// in force.
func (r *turnRunner) callTools(tools []harness.FunctionSpec) ([]harness.FunctionSpec, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	var out []harness.FunctionSpec
	if r.replySkillDue {
		// A viewer's turn must load a reply skill; a strategy skill is
		// the host's own narration's, not an answer's.
		for i, spec := range tools {
			if spec.Function.Name == r.h.LoadSkillToolName() {
				out = append([]harness.FunctionSpec(nil), tools...)
				out[i].Function.Parameters = replySkillParameters(r.h)
			}
		}
	}
	if r.s.cfg.CatalogItems == nil {
		return out, nil
	}
	ids := r.catalogItems()
	if len(ids) == 0 {
		return out, nil
	}
	if found := r.foundItems(); len(found) > 0 {
		// A call after the turn's lookups is about what they found: a
		// model that wrote another id checked an item nobody asked of.
		ids = found
	}
	for i, spec := range tools {
		tool, ok := r.h.Tool(spec.Function.Name)
		if !ok || len(tool.CatalogArgs) == 0 && len(tool.QueryArgs) == 0 && len(tool.VariantArgs) == 0 && len(tool.CountArgs) == 0 {
			continue
		}
		var words, variants []string
		if len(tool.QueryArgs) > 0 {
			words = r.freshQueryWords()
		}
		if len(tool.VariantArgs) > 0 {
			variants = r.catalogVariants()
		}
		params, err := tool.CatalogParameters(ids, words, variants)
		if err == nil {
			params, err = tool.CountParameters(params, viewerCounts(r.viewerText))
		}
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = append([]harness.FunctionSpec(nil), tools...)
		}
		out[i].Function.Parameters = params
	}
	return out, nil
}

// checkCatalogArgs refuses a call whose catalog argument names no item of
// the stream, listing the ids so that the model can correct itself.
func (r *turnRunner) checkCatalogArgs(tool harness.Tool, args json.RawMessage) error {
	if len(tool.CatalogArgs) == 0 || r.s.cfg.CatalogItems == nil {
		return nil
	}
	ids := r.catalogItems()
	if len(ids) == 0 {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return fmt.Errorf("arguments of %s are not a JSON object: %v", tool.Name, err)
	}
	for _, name := range tool.CatalogArgs {
		v, ok := harness.ArgValue(obj, name)
		if !ok {
			continue
		}
		if id, _ := v.(string); !slices.Contains(ids, id) {
			return fmt.Errorf("%s %v is not an item of this stream; the items are %s", name, v, listIDs(ids))
		}
	}
	return nil
}

// maxListedIDs bounds the ids a refusal lists: a model reads the refusal,
// and a large catalog's every id would crowd out the conversation.
const maxListedIDs = 20

// listIDs writes ids for a refusal, the first maxListedIDs of a longer
// list followed by how many there are.
func listIDs(ids []string) string {
	if len(ids) <= maxListedIDs {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all)", strings.Join(ids[:maxListedIDs], ", "), len(ids))
}

// validateArgs checks a call's arguments against the tool's schema and
// the stream's catalog before any plugin sees them.
func (r *turnRunner) validateArgs(tool harness.Tool, args json.RawMessage) error {
	schema, err := r.s.schema(r.h, tool)
	if err != nil {
		return fmt.Errorf("tool %s has a broken schema: %v", tool.Name, err)
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("arguments of %s are not JSON: %v", tool.Name, err)
	}
	if err := schema.Validate(v); err != nil {
		return fmt.Errorf("arguments of %s do not match its schema: %v", tool.Name, firstLine(err.Error()))
	}
	return r.checkCatalogArgs(tool, args)
}

func firstLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return strings.TrimPrefix(l, "- ")
		}
	}
	return s
}

func (r *turnRunner) safeLine(msgs []harness.Message, reason string) {
	r.turn.Messages = msgs
	r.emit(r.s.cfg.SafeLine, OutcomeSafeLine, reason)
}

// emit speaks a reply: it is split into speakable chunks, each sent to
// the session's listener as soon as it is ready.
func (r *turnRunner) emit(reply string, o Outcome, reason string) {
	t := r.turn
	t.Reply, t.Outcome, t.Reason = reply, o, reason
	if o != OutcomeReplied {
		t.Actions = nil // the safe line shows nothing it did not say
	}
	for i, c := range SpeakableChunks(reply) {
		e := Event{Kind: EventChunk, Turn: t.ID, Text: c}
		if i == 0 {
			t.Timing.FirstChunk = r.since() + t.Timing.Queue
			e.Actions = t.Actions // the avatar acts as it starts speaking
		}
		t.Chunks = append(t.Chunks, c)
		r.s.publish(e)
	}
}

// addActions records avatar actions once each, in the order tools ran.
func (r *turnRunner) addActions(as []AvatarAction) {
	for _, a := range as {
		if !slices.Contains(r.turn.Actions, a) {
			r.turn.Actions = append(r.turn.Actions, a)
		}
	}
}
