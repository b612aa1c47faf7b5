// Package sdk is what LiveHAT plugin authors import: typed tools, hooks
// and skills over the Extism guest ABI, built with the standard Go
// toolchain (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared).
//
// A tool is a plain function from a typed request to a typed response, a
// hook returns a Decision of the harness's contract, and a skill returns
// its text:
//
//	//go:wasmexport lookup_product
//	func lookupProduct() int32 { return sdk.Tool(lookup) }
//
//	//go:wasmexport compliance
//	func compliance() int32 { return sdk.Hook(check) }
//
// The wire types of this file build on every platform, so plugin logic
// can be tested natively with go test; the functions that reach the host
// (Tool, Hook, Skill, Lookup, Get, Set, Log, Config) exist only in wasip1
// builds. The SDK decodes and encodes its own types without reflection
// (see package jsonx): encoding/json costs a Go guest ~100 µs a message.
//
// See ABI.md for the contract and README.md for a five-minute start.
package sdk

import (
	"errors"
	"fmt"
	"time"

	"github.com/livehat/livehat/sdk/jsonx"
)

// ABIVersion is the LiveHAT ABI version this SDK speaks. Plugins built
// with it export livehat_abi_v1, which the host checks at load.
const ABIVersion = 1

// Action is what a hook decided.
type Action string

// Hook actions, the harness's decision contract.
const (
	ActionAllow   Action = "allow"   // go on unchanged
	ActionDeny    Action = "deny"    // stop this step; Reason says why
	ActionRewrite Action = "rewrite" // replace the text or the tool arguments
	ActionInject  Action = "inject"  // add Context for the model
	ActionRetry   Action = "retry"   // the model tries again after reading Feedback
)

// Decision is a hook's result. It mirrors the host's harness.HookDecision
// field for field: {"action","reason","text","arguments","context","feedback"}.
type Decision struct {
	Action Action
	// Reason explains a deny (traces, not viewers).
	Reason string
	// Text replaces the message or reply on rewrite.
	Text string
	// Arguments (raw JSON) replace a tool call's arguments on rewrite.
	Arguments []byte
	// Context is added for the model on inject.
	Context string
	// Feedback is what the model reads before it tries again on retry.
	Feedback string
	// Call, on retry, is the export ("coupon_check" or
	// "storefront/coupon_check") of the tool the model's next answer must
	// call; the host finds the harness's tool that runs it.
	Call string
}

// Allow lets the step go on unchanged.
func Allow() Decision { return Decision{Action: ActionAllow} }

// Deny stops the step; reason is required.
func Deny(reason string) Decision { return Decision{Action: ActionDeny, Reason: reason} }

// Rewrite replaces the message or reply with text.
func Rewrite(text string) Decision { return Decision{Action: ActionRewrite, Text: text} }

// RewriteArguments replaces a tool call's arguments with args (JSON).
func RewriteArguments(args []byte) Decision { return Decision{Action: ActionRewrite, Arguments: args} }

// Inject adds context for the model.
func Inject(context string) Decision { return Decision{Action: ActionInject, Context: context} }

// Retry asks the model to answer again after reading feedback.
func Retry(feedback string) Decision { return Decision{Action: ActionRetry, Feedback: feedback} }

// RetryCall asks the model to answer again after reading feedback, its
// next answer a call of the tool that export runs: a hook that finds the
// fact asked missing asks for the call that gives it.
func RetryCall(feedback, export string) Decision {
	return Decision{Action: ActionRetry, Feedback: feedback, Call: export}
}

// Validate checks the fields against the action, as the host does.
func (d Decision) Validate() error {
	switch d.Action {
	case ActionAllow:
	case ActionDeny:
		if d.Reason == "" {
			return errors.New("decision deny: reason is empty")
		}
	case ActionRewrite:
		if d.Text == "" && len(d.Arguments) == 0 {
			return errors.New("decision rewrite: needs text or arguments")
		}
		if len(d.Arguments) > 0 && !jsonx.Valid(d.Arguments) {
			return errors.New("decision rewrite: arguments are not valid JSON")
		}
	case ActionInject:
		if d.Context == "" {
			return errors.New("decision inject: context is empty")
		}
	case ActionRetry:
		if d.Feedback == "" {
			return errors.New("decision retry: feedback is empty")
		}
	default:
		return fmt.Errorf("decision: unknown action %q", d.Action)
	}
	if d.Call != "" && d.Action != ActionRetry {
		return fmt.Errorf("decision %s: call is for retry only", d.Action)
	}
	return nil
}

// AppendJSON appends the decision's JSON to b.
func (d Decision) AppendJSON(b []byte) []byte {
	w := jsonx.Writer{}
	w.ObjectStart()
	w.Key("action")
	w.String(string(d.Action))
	field := func(k, v string) {
		if v != "" {
			w.Key(k)
			w.String(v)
		}
	}
	field("reason", d.Reason)
	field("text", d.Text)
	if len(d.Arguments) > 0 {
		w.Key("arguments")
		w.Raw(d.Arguments)
	}
	field("context", d.Context)
	field("feedback", d.Feedback)
	field("call", d.Call)
	w.ObjectEnd()
	return append(b, w.Bytes()...)
}

// DecodeDecision reads a decision's JSON.
func DecodeDecision(b []byte) (Decision, error) {
	var d Decision
	r := jsonx.NewReader(b)
	err := r.Object(func(k string) error {
		var err error
		switch k {
		case "action":
			var s string
			s, err = r.String()
			d.Action = Action(s)
		case "reason":
			d.Reason, err = r.String()
		case "text":
			d.Text, err = r.String()
		case "arguments":
			d.Arguments, err = r.Raw()
		case "context":
			d.Context, err = r.String()
		case "feedback":
			d.Feedback, err = r.String()
		case "call":
			d.Call, err = r.String()
		default:
			err = r.Skip()
		}
		return err
	})
	if err == nil {
		err = r.End()
	}
	return d, err
}

// HookEvent is a point of the turn where hooks run.
type HookEvent string

// Hook events, in the order a turn meets them.
const (
	EventSessionStart  HookEvent = "session_start"
	EventViewerMessage HookEvent = "viewer_message"
	EventBeforeModel   HookEvent = "before_model"
	EventBeforeTool    HookEvent = "before_tool"
	EventAfterTool     HookEvent = "after_tool"
	EventAfterResponse HookEvent = "after_response"
	EventNarrationTick HookEvent = "narration_tick"
)

// HookInput is what a hook receives.
type HookInput struct {
	Event   HookEvent
	Stream  string
	Session string
	// Viewer is who sent the message, when there is one.
	Viewer *Viewer
	// Text is the viewer's message (viewer_message) or the model's reply
	// (after_response).
	Text string
	// Tool is the call of before_tool and after_tool.
	Tool *ToolCall
	// ReplyChars is the harness's reply length limit, 0 if unset.
	ReplyChars int
	// Config is the hook's configuration (raw JSON), maybe empty.
	Config []byte

	// What after_response hooks receive to check a reply against the
	// facts the model was given.

	// Message is the viewer's message of the turn as the model read it.
	Message string
	// Lang is the language the reply must be in: "zh" or "en" (the
	// viewer's; for a narration the last viewer's or the stream's).
	Lang string
	// Calls are the turn's tool calls in order, with their results.
	Calls []ToolCall
	// Context is the stream context the model saw.
	Context []ContextItem
	// Attempt is the reply's attempt in the turn (1 for the first);
	// Attempts the most the turn allows. A Retry decided on the last
	// attempt puts the host's safe line on air, a Rewrite its text.
	Attempt, Attempts int
}

// ContextItem is one item of the stream context the model saw.
type ContextItem struct {
	Title, Text string
}

// Viewer is a viewer of the stream.
type Viewer struct {
	ID     string
	Name   string
	Orders int
}

// ToolCall is a tool call as hooks see it; Result is set after it ran.
type ToolCall struct {
	// Name is the harness's name for the tool, as the model called it;
	// Plugin and Export are what ran it (stable when a harness renames
	// the tool).
	Name           string
	Plugin, Export string
	Arguments      []byte
	Result         []byte
}

// DecodeHookInput reads a HookInput's JSON.
func DecodeHookInput(b []byte) (*HookInput, error) {
	in := &HookInput{}
	r := jsonx.NewReader(b)
	err := r.Object(func(k string) error {
		var err error
		switch k {
		case "event":
			var s string
			s, err = r.String()
			in.Event = HookEvent(s)
		case "stream":
			in.Stream, err = r.String()
		case "session":
			in.Session, err = r.String()
		case "text":
			in.Text, err = r.String()
		case "reply_chars":
			var n int64
			n, err = r.Int()
			in.ReplyChars = int(n)
		case "config":
			in.Config, err = r.Raw()
		case "viewer":
			if r.Null() {
				return nil
			}
			in.Viewer = &Viewer{}
			err = r.Object(func(k string) error {
				var err error
				switch k {
				case "id":
					in.Viewer.ID, err = r.String()
				case "name":
					in.Viewer.Name, err = r.String()
				case "orders":
					var n int64
					n, err = r.Int()
					in.Viewer.Orders = int(n)
				default:
					err = r.Skip()
				}
				return err
			})
		case "tool":
			if r.Null() {
				return nil
			}
			in.Tool = &ToolCall{}
			err = decodeToolCall(r, in.Tool)
		case "message":
			in.Message, err = r.String()
		case "lang":
			in.Lang, err = r.String()
		case "calls":
			err = r.Array(func() error {
				var c ToolCall
				err := decodeToolCall(r, &c)
				in.Calls = append(in.Calls, c)
				return err
			})
		case "context":
			err = r.Array(func() error {
				var c ContextItem
				err := r.Object(func(k string) error {
					var err error
					switch k {
					case "title":
						c.Title, err = r.String()
					case "text":
						c.Text, err = r.String()
					default:
						err = r.Skip()
					}
					return err
				})
				in.Context = append(in.Context, c)
				return err
			})
		case "attempt":
			var n int64
			n, err = r.Int()
			in.Attempt = int(n)
		case "attempts":
			var n int64
			n, err = r.Int()
			in.Attempts = int(n)
		default:
			err = r.Skip()
		}
		return err
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return nil, fmt.Errorf("hook input: %w", err)
	}
	return in, nil
}

// decodeToolCall reads a tool call object into c.
func decodeToolCall(r *jsonx.Reader, c *ToolCall) error {
	return r.Object(func(k string) error {
		var err error
		switch k {
		case "name":
			c.Name, err = r.String()
		case "plugin":
			c.Plugin, err = r.String()
		case "export":
			c.Export, err = r.String()
		case "arguments":
			c.Arguments, err = r.Raw()
		case "result":
			c.Result, err = r.Raw()
		default:
			err = r.Skip()
		}
		return err
	})
}

// appendToolCall writes a tool call object.
func appendToolCall(w *jsonx.Writer, c *ToolCall) {
	w.ObjectStart()
	w.Key("name")
	w.String(c.Name)
	for _, f := range [...]struct{ k, v string }{{"plugin", c.Plugin}, {"export", c.Export}} {
		if f.v != "" {
			w.Key(f.k)
			w.String(f.v)
		}
	}
	if len(c.Arguments) > 0 {
		w.Key("arguments")
		w.Raw(c.Arguments)
	}
	if len(c.Result) > 0 {
		w.Key("result")
		w.Raw(c.Result)
	}
	w.ObjectEnd()
}

// AppendJSON appends the input's JSON to b (for tests and tools).
func (in *HookInput) AppendJSON(b []byte) []byte {
	w := jsonx.Writer{}
	w.ObjectStart()
	w.Key("event")
	w.String(string(in.Event))
	str := func(k, v string) {
		if v != "" {
			w.Key(k)
			w.String(v)
		}
	}
	str("stream", in.Stream)
	str("session", in.Session)
	if in.Viewer != nil {
		w.Key("viewer")
		w.ObjectStart()
		w.Key("id")
		w.String(in.Viewer.ID)
		str("name", in.Viewer.Name)
		if in.Viewer.Orders != 0 {
			w.Key("orders")
			w.Int(int64(in.Viewer.Orders))
		}
		w.ObjectEnd()
	}
	str("text", in.Text)
	if in.Tool != nil {
		w.Key("tool")
		appendToolCall(&w, in.Tool)
	}
	str("message", in.Message)
	str("lang", in.Lang)
	if len(in.Calls) > 0 {
		w.Key("calls")
		w.ArrayStart()
		for i := range in.Calls {
			appendToolCall(&w, &in.Calls[i])
		}
		w.ArrayEnd()
	}
	if len(in.Context) > 0 {
		w.Key("context")
		w.ArrayStart()
		for _, c := range in.Context {
			w.ObjectStart()
			w.Key("title")
			w.String(c.Title)
			w.Key("text")
			w.String(c.Text)
			w.ObjectEnd()
		}
		w.ArrayEnd()
	}
	for _, f := range [...]struct {
		k string
		v int
	}{{"attempt", in.Attempt}, {"attempts", in.Attempts}} {
		if f.v != 0 {
			w.Key(f.k)
			w.Int(int64(f.v))
		}
	}
	if in.ReplyChars != 0 {
		w.Key("reply_chars")
		w.Int(int64(in.ReplyChars))
	}
	if len(in.Config) > 0 {
		w.Key("config")
		w.Raw(in.Config)
	}
	w.ObjectEnd()
	return append(b, w.Bytes()...)
}

// SkillInput is what a skill receives.
type SkillInput struct {
	Skill   string
	Stream  string
	Session string
	Config  []byte
}

// DecodeSkillInput reads a SkillInput's JSON.
func DecodeSkillInput(b []byte) (*SkillInput, error) {
	in := &SkillInput{}
	r := jsonx.NewReader(b)
	err := r.Object(func(k string) error {
		var err error
		switch k {
		case "skill":
			in.Skill, err = r.String()
		case "stream":
			in.Stream, err = r.String()
		case "session":
			in.Session, err = r.String()
		case "config":
			in.Config, err = r.Raw()
		default:
			err = r.Skip()
		}
		return err
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return nil, fmt.Errorf("skill input: %w", err)
	}
	return in, nil
}

// AppendSkillOutput appends a skill's output, {"text": text}, to b.
func AppendSkillOutput(b []byte, text string) []byte {
	b = append(b, `{"text":`...)
	b = jsonx.AppendString(b, text)
	return append(b, '}')
}

// JSONDecoder is implemented by tool requests that decode themselves
// without reflection; other request types go through encoding/json.
type JSONDecoder interface {
	DecodeJSON(r *jsonx.Reader) error
}

// JSONAppender is implemented by tool responses that encode themselves
// without reflection; other response types go through encoding/json.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

// parseTime reads an RFC 3339 time, "" as the zero time.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
