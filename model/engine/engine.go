// Package engine is the local generation engine: it turns the model core
// (transformer, tokenizer, chat template, sampler, tool-call constraint) into
// a chat-completion service that many sessions share. It generates through
// model.Decoder: the model on its CPU backend, or with LIVEHAT_BACKEND=cuda
// the CUDA runner holding the weights and KV caches on the GPU.
//
// Every Generate call becomes a request in one scheduler goroutine
// (continuous batching). Each model step advances every active request by
// one token in a single matrix-matrix product over the weights, while
// joining requests read their prompts in chunks from a per-step budget,
// oldest first, so that a long prefill never stalls the others. At most
// Options.MaxBatch requests are active; more wait, earliest Request.Since
// first (by default the order they arrived in), and join between steps. A
// cancelled request leaves within one step.
//
// Prompts go through a prefix cache, so the harness prefix of a live room
// (its system prompt and tools) is computed once and reused by every viewer
// question; a request whose prefix an older request is still computing waits
// for it rather than computing it again.
//
// Message text is tokenized so that it cannot inject special tokens, and
// with Request.Constrain every tool call the model writes is valid JSON
// matching its tool's schema.
//
// With Options.Speculative and a model that has multi-token-prediction
// heads, each decoding request drafts a few tokens with the heads before a
// step and feeds them after its next token; the step's logits verify them
// (greedy: a draft stands when it is the model's own choice; sampling: the
// speculative-sampling rule, so replies keep their distribution), each
// chosen token passes the stop strings and the tool-call constraint as in
// plain decoding, and the cache of rejected positions is dropped.
package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/constrain"
	"github.com/livehat/livehat/model/cuda"
	"github.com/livehat/livehat/model/internal/kernel"
	"github.com/livehat/livehat/model/sample"
	"github.com/livehat/livehat/model/tokenizer"
)

// Finish reasons reported in Result.FinishReason, as OpenAI-compatible APIs
// name them.
const (
	// FinishStop: the model ended its turn or a stop string was written.
	FinishStop = "stop"
	// FinishLength: MaxTokens or the model's context was reached.
	FinishLength = "length"
	// FinishToolCalls: the model ended its turn after calling tools.
	FinishToolCalls = "tool_calls"
	// FinishCancelled: the caller's context was cancelled or its delta
	// callback failed.
	FinishCancelled = "cancelled"
)

// ErrClosed is returned by Generate once the engine is closed.
var ErrClosed = errors.New("engine: closed")

// Defaults for the zero Options.
const (
	DefaultMaxBatch         = 8
	DefaultPrefillChunk     = 128
	DefaultPrefixCacheBytes = 256 << 20
)

// Options configure an Engine.
type Options struct {
	// Model configures how Load builds the model (storage type, backend,
	// context cap). New ignores it. With no Backend, Load opens the one
	// Backend names, which Close releases.
	Model model.Options
	// MaxBatch bounds the requests advanced together in one step; more wait,
	// earliest Request.Since first. 0 means DefaultMaxBatch.
	MaxBatch int
	// PrefillChunk bounds the prompt tokens fed in one step over all joining
	// requests, so that decoding requests keep producing tokens while a long
	// prompt is read. 0 means DefaultPrefillChunk: on the CPU backend a
	// chunk of 128 costs under a tenth more per token than one of 1,000
	// while holding the other streams for an eighth of the time.
	PrefillChunk int
	// PrefixCacheBytes bounds the prefix cache's keys and values. 0 means
	// DefaultPrefixCacheBytes; a negative value disables the cache.
	PrefixCacheBytes int64
	// Speculative is how many tokens the model's multi-token-prediction
	// heads draft per step for each decoding request, at most the model's
	// Config.MTPHeads; the request's next step verifies them in the same
	// pass that feeds its next token. 0 turns speculative decoding off.
	// Replies keep their distribution (greedy replies are unchanged); only
	// the number of steps falls, by the mean accepted length, which
	// Usage.Speculation and Stats.Speculation report.
	Speculative int
	// Backend names the backend Load computes on when Model.Backend is
	// nil: "cpu" or "cuda". Empty means the LIVEHAT_BACKEND environment
	// variable (cpu when unset). With "cuda" the engine generates through
	// a cuda.Runner: the whole forward pass and the KV caches on the GPU,
	// the MTP heads' drafts on the CPU. Load fails when "cuda" is chosen
	// and no device opens, rather than falling back to the CPU: a
	// deployment that asked for the GPU would otherwise serve many times
	// slower without anyone noticing.
	Backend string
	// Threads is the CPU backend's compute threads when Load creates it
	// (the host-side threads of the CUDA backend). 0 means
	// DefaultThreads, one per physical core but one: the core left over
	// runs what else a serving process does while the model computes (the
	// runtime's hooks and tools, prompt rendering, HTTP, the GC), which
	// otherwise takes turns with a compute thread inside every matrix
	// product. On the 2-core machine one compute thread gave lower
	// latency than two in paired live-room runs (runtime/BENCHMARKS.md).
	Threads int
}

// Request is one chat completion.
type Request struct {
	// Messages is the conversation so far; the reply continues it as an
	// assistant turn.
	Messages []chat.Message
	// Tools the model may call.
	Tools []chat.Tool
	// MaxTokens bounds the generated tokens; 0 means up to the model's
	// context.
	MaxTokens int
	// Sampling chooses how tokens are picked; the zero value is greedy.
	Sampling sample.Config
	// Stop strings end the reply; the stop string itself is not returned.
	Stop []string
	// Constrain makes every tool call valid: once the answer (not the
	// reasoning) opens <tool_call>, only tokens that keep it a prefix of a
	// call matching one of Tools are sampled, and after the call only a
	// little white space, another call or the end of the turn. It needs
	// Tools. Schema keywords that constrain values rather than structure
	// (minimum, pattern, format) are not enforced; see constrain.Grammar.
	Constrain bool
	// CallTools, when set, are the schemas Constrain holds calls to in
	// place of Tools': the same tools with narrower values, such as an
	// item id limited to the ids of the stream's catalog. The prompt still
	// shows Tools, so what the model reads does not change with them.
	CallTools []chat.Tool
	// DisableThinking renders the prompt with an empty <think> block, so a
	// Qwen3 model answers without reasoning first.
	DisableThinking bool
	// IgnoreEOS keeps generating past the end-of-turn token, until
	// MaxTokens, a stop string or the context ends the reply; the token
	// itself adds no text. Benchmarks use it for replies of fixed length.
	IgnoreEOS bool
	// MustCall names a tool of Tools the reply must call: the reply opens
	// <tool_call> and, with Constrain, the call is held to that tool, so
	// the model writes only its arguments' values. It is OpenAI's
	// tool_choice naming a function. It cannot be set with Prefix.
	MustCall string
	// Prefix is text the reply is forced to begin with, as if the model had
	// written it: it is read with the prompt, streamed and returned as part
	// of the reply, and not counted in CompletionTokens. A Prefix of
	// "<tool_call>" forces a tool call.
	Prefix string
	// Since orders the engine's waiting line: when more requests wait than
	// MaxBatch admits, the one with the earliest Since joins the batch
	// first. A caller passes when the work the request serves began — the
	// arrival of the viewer's question — so that the second round of a
	// turn, after a tool call, does not queue behind turns that began
	// later, and a question that waited long elsewhere is not made to
	// wait again. The zero value is the time Generate is called.
	Since time.Time
}

// Delta is one streamed piece of a reply. Exactly one field is set.
type Delta struct {
	// Content is answer text outside tool calls.
	Content string
	// Reasoning is text of the model's <think> block.
	Reasoning string
	// ToolCall is a tool call, delivered once it is complete and parsed.
	ToolCall *chat.ToolCall
}

// Result is a finished reply.
type Result struct {
	// Text is the reply as the model wrote it, Prefix included, without the
	// stop string and special tokens. The reply's tokens stay in the prefix
	// cache, so a next turn whose prompt renders this text unchanged (see
	// chat.RenderOptions.VerbatimArguments) can reuse them.
	Text string
	// Content is the answer text without the reasoning and the tool calls,
	// trimmed of surrounding white space.
	Content string
	// Reasoning is the text of the <think> block, trimmed.
	Reasoning string
	// ToolCalls are the calls the reply made, parsed by chat.ParseAssistant.
	ToolCalls []chat.ToolCall
	// ToolCallError says why the reply's tool-call text did not parse; then
	// ToolCalls is empty and Content holds the text as written.
	ToolCallError error
	// FinishReason is FinishStop, FinishLength, FinishToolCalls or
	// FinishCancelled.
	FinishReason string
	// Usage counts the request's tokens and time.
	Usage Usage
}

// Usage counts the work of one request.
type Usage struct {
	// PromptTokens is the length of the rendered prompt (with Prefix).
	PromptTokens int
	// CachedTokens of the prompt were restored from the prefix cache
	// instead of computed.
	CachedTokens int
	// CompletionTokens were generated.
	CompletionTokens int
	// Queued is the time from the call until the request joined the batch.
	Queued time.Duration
	// Prefill is the time from joining the batch to the first generated
	// token; Queued + Prefill is the time to first token.
	Prefill time.Duration
	// Decode is the time from the first generated token to the end.
	Decode time.Duration
	// Speculation counts the request's verification steps and its drafted
	// and accepted tokens (zero without speculative decoding).
	Speculation model.SpecStats
}

// Engine serves chat completions from one model to any number of
// concurrent callers. It is safe for concurrent use.
type Engine struct {
	// dec is what the engine generates with: the model on its backend, or
	// a GPU runner holding its weights (LIVEHAT_BACKEND=cuda).
	dec model.Decoder
	// host is the model dec was built from, which Model returns.
	host  *model.Model
	cfg   model.Config
	tok   *tokenizer.Tokenizer
	opts  Options
	cache *model.PrefixCache
	// owned releases what Load created (the backend, a GPU device); Close
	// calls it.
	owned func()
	// headDraft runs MTP head d over the rows of the requests given
	// (model.Draft; tests substitute drafts of known quality).
	headDraft func(d int, rs []*request, hidden []float32, tokens []int) (next, logits []float32, err error)

	special      []bool   // by token id: added tokens marked special
	specialTexts []string // their contents
	eos          []bool   // by token id: tokens that end the turn

	vocabOnce sync.Once
	vocab     *constrain.Vocabulary
	afterCall *afterCallSets

	statsMu sync.Mutex
	stats   Stats

	submit    chan *request
	quit      chan struct{} // closed by Close
	stopped   chan struct{} // closed when the scheduler has returned
	stepCtx   context.Context
	stopSteps context.CancelFunc
	closeOnce sync.Once
}

// Load builds an engine from a Hugging Face checkpoint directory:
// config.json, model.safetensors (or its shards) and tokenizer.json. Without
// Options.Model.Backend it computes on the backend Options.Backend names
// and releases it (the CPU threads; the GPU runner and device) on Close.
func Load(dir string, opts Options) (*Engine, error) {
	mopts := opts.Model
	var be backend
	if mopts.Backend == nil {
		var err error
		if be, err = openBackend(opts.Backend, opts.Threads); err != nil {
			return nil, fmt.Errorf("engine: load %s: %w", dir, err)
		}
		mopts.Backend = be.cpu
	}
	fail := func(err error) (*Engine, error) {
		be.release()
		return nil, fmt.Errorf("engine: load %s: %w", dir, err)
	}
	m, err := model.Load(dir, mopts)
	if err != nil {
		return fail(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return fail(err)
	}
	dec := m.Decoder()
	if be.device != nil {
		r, err := cuda.NewRunner(be.device, m, cuda.RunnerOptions{})
		if err != nil {
			return fail(err)
		}
		be.runner = r
		dec = r.Decoder()
	}
	e, err := newEngine(dec, m, tok, opts, be.release)
	if err != nil {
		return fail(err)
	}
	return e, nil
}

// DefaultThreads is the compute threads Load gives the CPU backend when
// Options.Threads is 0: one per physical core but one, at least one.
func DefaultThreads() int { return max(1, kernel.PhysicalCores()-1) }

// backend is what Load opened to compute on: the CPU threads the model
// computes (or, on a GPU, drafts) on, and with cuda the device and, once
// the weights are loaded, the runner on it.
type backend struct {
	cpu    *model.CPU
	device *cuda.Device
	runner *cuda.Runner
}

// release frees what was opened, the runner before its device.
func (b backend) release() {
	if b.runner != nil {
		b.runner.Close()
	}
	if b.device != nil {
		b.device.Close()
	}
	if b.cpu != nil {
		b.cpu.Close()
	}
}

// openBackend opens the backend name selects ("" reads LIVEHAT_BACKEND)
// on the given CPU threads.
func openBackend(name string, threads int) (backend, error) {
	if threads <= 0 {
		threads = DefaultThreads()
	}
	if name == "" {
		var err error
		if name, err = cuda.BackendName(); err != nil {
			return backend{}, err
		}
	}
	switch name {
	case "cpu":
		return backend{cpu: model.NewCPU(threads)}, nil
	case "cuda":
		d, err := cuda.Open(cuda.Options{})
		if err != nil {
			return backend{}, fmt.Errorf("backend cuda (LIVEHAT_BACKEND=cpu computes on the CPU instead): %w", err)
		}
		return backend{cpu: model.NewCPU(threads), device: d}, nil
	}
	return backend{}, fmt.Errorf("unknown backend %q (want cpu or cuda)", name)
}

// New builds an engine over a model and its tokenizer, computing on the
// model's backend. The engine does not own the backend; the caller stops
// it after Close.
func New(m *model.Model, tok *tokenizer.Tokenizer, opts Options) (*Engine, error) {
	if m == nil {
		return nil, errors.New("engine: a model and a tokenizer are required")
	}
	return newEngine(m.Decoder(), m, tok, opts, func() {})
}

// newEngine builds an engine generating with dec, which was built from
// host; owned releases what the engine owns.
func newEngine(dec model.Decoder, host *model.Model, tok *tokenizer.Tokenizer, opts Options, owned func()) (*Engine, error) {
	if dec == nil || tok == nil {
		return nil, errors.New("engine: a model and a tokenizer are required")
	}
	cfg := dec.Config()
	vocab := cfg.VocabSize
	if tok.VocabSize() > vocab {
		return nil, fmt.Errorf("engine: tokenizer has %d tokens, the model's vocabulary only %d", tok.VocabSize(), vocab)
	}
	switch {
	case opts.MaxBatch < 0:
		return nil, fmt.Errorf("engine: MaxBatch %d is negative", opts.MaxBatch)
	case opts.MaxBatch == 0:
		opts.MaxBatch = DefaultMaxBatch
	}
	switch {
	case opts.PrefillChunk < 0:
		return nil, fmt.Errorf("engine: PrefillChunk %d is negative", opts.PrefillChunk)
	case opts.PrefillChunk == 0:
		opts.PrefillChunk = DefaultPrefillChunk
	}
	if opts.PrefixCacheBytes == 0 {
		opts.PrefixCacheBytes = DefaultPrefixCacheBytes
	}
	if opts.Speculative < 0 || opts.Speculative > dec.MTPHeads() {
		return nil, fmt.Errorf("engine: Speculative %d: the model has %d MTP heads", opts.Speculative, dec.MTPHeads())
	}
	e := &Engine{
		dec:     dec,
		host:    host,
		cfg:     cfg,
		tok:     tok,
		opts:    opts,
		owned:   owned,
		special: make([]bool, vocab),
		eos:     make([]bool, vocab),
		submit:  make(chan *request),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	e.headDraft = func(d int, _ []*request, hidden []float32, tokens []int) ([]float32, []float32, error) {
		return dec.Draft(d, hidden, tokens)
	}
	if opts.PrefixCacheBytes > 0 {
		e.cache = dec.NewPrefixCache(opts.PrefixCacheBytes)
	}
	for _, a := range tok.AddedTokens() {
		if a.Special && a.ID < vocab {
			e.special[a.ID] = true
			e.specialTexts = append(e.specialTexts, a.Content)
		}
	}
	if id := cfg.EOSTokenID; id >= 0 && id < vocab {
		e.eos[id] = true
	}
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := tok.TokenID(s); ok && id < vocab {
			e.eos[id] = true
		}
	}
	e.stepCtx, e.stopSteps = context.WithCancel(context.Background())
	go e.run()
	return e, nil
}

// Close stops the engine: requests still running end with ErrClosed, and a
// backend that Load created is stopped. Close waits for the scheduler to
// return and is safe to call more than once.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		close(e.quit)
		e.stopSteps()
		<-e.stopped
		e.owned()
	})
	return nil
}

// Model returns the engine's model: the weights it generates with on the
// CPU, or those it uploaded to the GPU runner.
func (e *Engine) Model() *model.Model { return e.host }

// Tokenizer returns the engine's tokenizer.
func (e *Engine) Tokenizer() *tokenizer.Tokenizer { return e.tok }

// Stats counts the engine's work since it was created.
type Stats struct {
	// Active requests are in the batch; Waiting ones are queued for it.
	Active, Waiting int
	// Steps is the number of model steps run.
	Steps int64
	// StepSequences sums the sequences advanced over all steps, so
	// StepSequences/Steps is the mean batch size.
	StepSequences int64
	// MaxStepSequences is the largest batch of one step.
	MaxStepSequences int
	// Busy is the wall time the scheduler spent in steps (the model's
	// pass and the work on its result): over an interval, its growth is
	// the share of the time the engine had work, the utilisation its
	// queue follows.
	Busy time.Duration
	// PrefixCache holds the prefix cache's counters (zero when disabled).
	PrefixCache model.PrefixCacheStats
	// Speculation sums the requests' speculative-decoding counts.
	Speculation model.SpecStats
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	e.statsMu.Lock()
	st := e.stats
	e.statsMu.Unlock()
	if e.cache != nil {
		st.PrefixCache = e.cache.Stats()
	}
	return st
}

// Generate writes the assistant's reply to req.Messages. Pieces of the reply
// go to onDelta (which may be nil) as they are decoded, on the caller's
// goroutine; text that might still turn out to be part of a stop string or of
// a tag is held back until the next token decides it. An error from onDelta
// stops the request and is returned.
//
// When ctx is cancelled, generation stops within one model step and Generate
// returns the partial reply, with FinishReason FinishCancelled, together with
// the context's error. A request that cannot be served (no messages, a prompt
// longer than the context, invalid sampling or tool schemas) fails before it
// is queued; once the engine is closed Generate returns ErrClosed.
func (e *Engine) Generate(ctx context.Context, req Request, onDelta func(Delta) error) (Result, error) {
	select {
	case <-e.quit:
		return Result{}, ErrClosed
	default:
	}
	r, err := e.newRequest(req)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.ctx = ctx
	select {
	case e.submit <- r:
	case <-ctx.Done():
		return Result{FinishReason: FinishCancelled, Usage: Usage{PromptTokens: len(r.prompt)}}, context.Cause(ctx)
	case <-e.quit:
		return Result{}, ErrClosed
	}
	var cbErr error
	deliver := func() {
		for _, d := range r.takeDeltas() {
			if onDelta == nil || cbErr != nil {
				continue
			}
			if err := onDelta(d); err != nil {
				cbErr = fmt.Errorf("engine: delta callback: %w", err)
				cancel(cbErr)
			}
		}
	}
	for {
		select {
		case <-r.notify:
			deliver()
		case <-r.done:
			deliver()
			if cbErr != nil {
				return r.result, cbErr
			}
			return r.result, r.err
		}
	}
}

// sameTools requires CallTools, when set, to name exactly the tools the
// prompt shows: a call schema for a tool the model cannot see, or none
// for one it can, would make the constraint and the prompt disagree.
func sameTools(tools, call []chat.Tool) error {
	if call == nil {
		return nil
	}
	shown := make(map[string]bool, len(tools))
	for _, t := range tools {
		shown[t.Name] = true
	}
	if len(call) != len(tools) {
		return fmt.Errorf("engine: %d call schemas for %d tools", len(call), len(tools))
	}
	for _, t := range call {
		if !shown[t.Name] {
			return fmt.Errorf("engine: call schema for %q, which is not among the tools", t.Name)
		}
	}
	return nil
}

// newRequest renders and tokenizes the prompt and prepares the sampler and
// the constraint, so that bad input fails before it reaches the scheduler.
func (e *Engine) newRequest(req Request) (*request, error) {
	if len(req.Messages) == 0 {
		return nil, errors.New("engine: request has no messages")
	}
	if req.MaxTokens < 0 {
		return nil, fmt.Errorf("engine: MaxTokens %d is negative", req.MaxTokens)
	}
	if req.Constrain && len(req.Tools) == 0 {
		return nil, errors.New("engine: Constrain needs tools")
	}
	if err := sameTools(req.Tools, req.CallTools); err != nil {
		return nil, err
	}
	if req.MustCall != "" {
		if !slices.ContainsFunc(req.Tools, func(t chat.Tool) bool { return t.Name == req.MustCall }) {
			return nil, fmt.Errorf("engine: MustCall %q is not among the tools", req.MustCall)
		}
		if req.Prefix != "" {
			return nil, errors.New("engine: MustCall and Prefix both set the reply's beginning")
		}
		req.Prefix = chat.ToolCallOpen
	}
	sampler, err := sample.New(req.Sampling)
	if err != nil {
		return nil, fmt.Errorf("engine: sampling: %w", err)
	}
	text, prompt, err := e.encodePrompt(req)
	if err != nil {
		return nil, err
	}
	if req.Prefix != "" {
		prompt = append(prompt, e.tok.EncodeWithSpecial(req.Prefix)...)
	}
	if len(prompt) == 0 {
		return nil, errors.New("engine: the prompt encodes to no tokens")
	}
	if limit := e.dec.MaxContext(); len(prompt) >= limit {
		return nil, fmt.Errorf("engine: prompt of %d tokens leaves no room in the model's context of %d: %w", len(prompt), limit, model.ErrContextTooLong)
	}
	r := &request{
		prompt:    prompt,
		history:   append(make([]int, 0, len(prompt)+64), prompt...),
		maxTokens: req.MaxTokens,
		ignoreEOS: req.IgnoreEOS,
		sampler:   sampler,
		reply:     newReplyText(e.tok, e.special, req.Stop, opensThink(text)),
		notify:    make(chan struct{}, 1),
		done:      make(chan struct{}),
		submitted: time.Now(),
	}
	r.since = req.Since
	if r.since.IsZero() {
		r.since = r.submitted
	}
	if req.Constrain {
		schemas := req.Tools
		if req.CallTools != nil {
			schemas = req.CallTools
		}
		if req.MustCall != "" {
			schemas = slices.DeleteFunc(slices.Clone(schemas), func(t chat.Tool) bool { return t.Name != req.MustCall })
		}
		g, err := constrain.Compile(schemas)
		if err != nil {
			return nil, fmt.Errorf("engine: constrain tool calls: %w", err)
		}
		vocab, after := e.constraintVocabulary()
		r.guard = newCallGuard(vocab, g, after)
	}
	if req.Prefix != "" {
		deltas, stopped := r.reply.pushText(req.Prefix)
		if stopped {
			return nil, fmt.Errorf("engine: prefix %q contains a stop string", req.Prefix)
		}
		r.addDeltas(deltas)
		if r.guard != nil {
			if err := r.guard.scan(r.reply.raw, r.reply.contentStart()); err != nil {
				return nil, fmt.Errorf("engine: prefix %q: %w", req.Prefix, err)
			}
		}
	}
	return r, nil
}

// encodePrompt renders the conversation and tokenizes it. The template's
// markup is read with special tokens recognised, as chat templates are; a
// message whose text itself contains a special token's text (a viewer
// typing "<|im_start|>system") is read as plain text instead, so that no one
// can inject turns or control tokens through a message.
func (e *Engine) encodePrompt(req Request) (string, []int, error) {
	opts := chat.RenderOptions{AddGenerationPrompt: true, DisableThinking: req.DisableThinking}
	msgs := req.Messages
	var plain map[string]string // placeholder → message text to read as plain text
	for i, m := range req.Messages {
		if !e.hasSpecialText(m.Content) {
			continue
		}
		if plain == nil {
			plain = map[string]string{}
			msgs = slices.Clone(req.Messages)
		}
		// Private-use characters that no message contains mark the text's
		// place in the rendered prompt.
		ph := fmt.Sprintf("\uE000%d\uE001", i)
		if strings.Contains(m.Content, ph) {
			return "", nil, fmt.Errorf("engine: message %d contains private-use marker text %q", i, ph)
		}
		plain[ph] = m.Content
		msgs[i].Content = ph
	}
	text, err := chat.Render(msgs, req.Tools, opts)
	if err != nil {
		return "", nil, fmt.Errorf("engine: render prompt: %w", err)
	}
	if plain == nil {
		return text, e.tok.EncodeWithSpecial(text), nil
	}
	var ids []int
	rest := text
	for rest != "" {
		start := strings.Index(rest, "\uE000")
		end := strings.Index(rest, "\uE001")
		if start < 0 || end < start {
			ids = append(ids, e.tok.EncodeWithSpecial(rest)...)
			break
		}
		ids = append(ids, e.tok.EncodeWithSpecial(rest[:start])...)
		content, ok := plain[rest[start:end+len("\uE001")]]
		if !ok {
			return "", nil, errors.New("engine: the chat template altered a message's place marker")
		}
		ids = append(ids, e.tok.Encode(content)...)
		rest = rest[end+len("\uE001"):]
	}
	return text, ids, nil
}

// hasSpecialText reports whether s contains the text of a special token.
func (e *Engine) hasSpecialText(s string) bool {
	for _, t := range e.specialTexts {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// constraintVocabulary prepares, once, the tokens' byte strings for the
// tool-call constraint (special tokens have none, so a call never contains
// them) and the sets of tokens allowed after a constrained call.
func (e *Engine) constraintVocabulary() (*constrain.Vocabulary, *afterCallSets) {
	e.vocabOnce.Do(func() {
		n := e.cfg.VocabSize
		tokens := make([][]byte, n)
		after := &afterCallSets{spaced: constrain.NewTokenSet(n), closing: constrain.NewTokenSet(n), space: make([]bool, n)}
		for id := range n {
			b := e.tok.TokenBytes(id)
			switch {
			case e.eos[id] || !e.special[id] && string(b) == chat.ToolCallOpen:
				after.spaced.Add(id)
				after.closing.Add(id)
				after.canClose = true
			case !e.special[id] && len(b) > 0 && isSpace(b):
				after.spaced.Add(id)
				after.space[id] = true
			}
			if !e.special[id] {
				tokens[id] = b
			}
		}
		e.vocab = constrain.NewVocabulary(tokens)
		e.afterCall = after
	})
	return e.vocab, e.afterCall
}

func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
