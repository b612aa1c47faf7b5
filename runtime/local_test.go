package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestLocalModelInTheLoop runs turns with the real model core in the
// loop: a random-weight tiny Qwen2 model behind the engine. Its words are
// noise, but the loop must finish every turn (a reply or the safe line),
// count the prompt tokens, and reuse the harness prefix from the engine's
// prefix cache on the second turn.
func TestLocalModelInTheLoop(t *testing.T) {
	eng := tinyEngine(t)
	// A small harness keeps the prompt short for a CPU test.
	h, err := harness.Load("../harness/testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	h.Pipeline.RequireReplySkill = false
	s := startSession(t, Config{Harness: h, Plugins: newPlugins(), Model: LocalModel{Engine: eng, Constrain: true}, MaxTokens: 8})
	if err := s.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := eng.Stats(); st.PrefixCache.StoreTokens == 0 {
		t.Errorf("Warm left the prefix cache empty: %+v", st)
	}
	ev := s.Listen(64)
	first := ask(t, s, ev, "How much is the serum?")
	second := ask(t, s, ev, "有货吗？")
	for _, turn := range []*Turn{first, second} {
		if turn.Outcome != OutcomeReplied && turn.Outcome != OutcomeSafeLine {
			t.Errorf("outcome %s (%s)", turn.Outcome, turn.Reason)
		}
		if turn.Timing.PromptTokens == 0 || turn.Timing.Model <= 0 {
			t.Errorf("timing = %+v", turn.Timing)
		}
	}
	if first.Timing.CachedTokens == 0 || second.Timing.CachedTokens == 0 {
		t.Errorf("turns reused no cached prompt tokens after Warm: %+v / %+v", first.Timing, second.Timing)
	}

	// The engine's counters reach Prometheus under the model's name, and
	// stop when it is forgotten.
	reg := prometheus.NewRegistry()
	em, err := NewEngineMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	em.Watch("tiny", eng)
	want := `
# HELP livehat_engine_waiting_requests Requests waiting for a place in the batch.
# TYPE livehat_engine_waiting_requests gauge
livehat_engine_waiting_requests{model="tiny"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "livehat_engine_waiting_requests"); err != nil {
		t.Error(err)
	}
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[mf.GetName()] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	st := eng.Stats()
	if got["livehat_engine_busy_seconds_total"] <= 0 || got["livehat_engine_steps_total"] != float64(st.Steps) ||
		got["livehat_engine_prefix_cache_hit_tokens_total"] != float64(st.PrefixCache.HitTokens) || len(got) != 7 {
		t.Errorf("engine metrics %v, engine stats %+v", got, st)
	}
	em.Forget("tiny")
	if n := testutil.CollectAndCount(em); n != 0 {
		t.Errorf("%d series after Forget", n)
	}
	var none *EngineMetrics
	none.Watch("tiny", eng)
	none.Forget("tiny")
}

// tinyEngine serves a random-weight tiny Qwen2 model with a tokenizer
// trained on shop sentences: noise for words, real for the loop's paths.
func tinyEngine(t *testing.T) *engine.Engine {
	t.Helper()
	var corpus []string
	for i := range 30 {
		corpus = append(corpus, fmt.Sprintf("How much is the serum? 精华多少钱？ The price is %d yuan. 有货吗", 100+i))
	}
	tok, err := tokenizer.Train(context.Background(), slices.Values(corpus), tokenizer.TrainConfig{VocabSize: 400,
		SpecialTokens: []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := model.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.VocabSize = tok.VocabSize()
	cfg.MaxPositionEmbeddings = 16384
	if id, ok := tok.TokenID("<|im_end|>"); ok {
		cfg.EOSTokenID = id
	}
	cpu := model.NewCPU(2)
	t.Cleanup(cpu.Close)
	m, err := model.NewRandom(cfg, 1, model.Options{DType: model.F32, Backend: cpu})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(m, tok, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestLocalModelMustCall: a request that must call a tool gets that call,
// whatever the model would have said, with arguments it wrote within the
// tool's schema; a tool the request does not offer is an error.
func TestLocalModelMustCall(t *testing.T) {
	m := LocalModel{Engine: tinyEngine(t), Constrain: true}
	tools := []harness.FunctionSpec{
		{Type: "function", Function: harness.FunctionBody{Name: "lookup", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}},
		{Type: "function", Function: harness.FunctionBody{Name: "pick", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","enum":["price_answer","stock_answer"]}},"required":["id"]}`)}},
	}
	msgs := []harness.Message{{Role: harness.RoleSystem, Content: "You host a shop."}, {Role: harness.RoleUser, Content: "How much is the serum?"}}
	res, err := m.Generate(context.Background(), Request{Messages: msgs, Tools: tools, MustCall: "pick", MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) == 0 {
		t.Fatalf("reply %q: no call", res.Content)
	}
	for _, c := range res.ToolCalls {
		var args struct{ ID string }
		if err := json.Unmarshal(c.Arguments, &args); c.Name != "pick" || err != nil || args.ID != "price_answer" && args.ID != "stock_answer" {
			t.Errorf("call %s %s (%v): want pick with an id of its enum", c.Name, c.Arguments, err)
		}
	}
	if _, err := m.Generate(context.Background(), Request{Messages: msgs, Tools: tools, MustCall: "teleport"}); err == nil || !strings.Contains(err.Error(), "teleport") {
		t.Errorf("a tool the request does not offer: err %v", err)
	}
}
