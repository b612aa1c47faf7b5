package hsa

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
)

func TestMapTranscript(t *testing.T) {
	old := fuzzHarness()
	gold := fuzzGold()
	var calls []harness.ToolCall
	for _, c := range gold {
		tc, err := c.ToolCall()
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, tc)
	}
	skill, _ := old.Skill("price_reply")
	msgs := []harness.Message{
		{Role: harness.RoleUser, Content: "多少钱？"},
		{Role: harness.RoleAssistant, ToolCalls: calls[2:]},
		{Role: harness.RoleTool, Name: "open_skill", Content: harness.SkillContent(skill) + "\n\nplugin extra"},
		{Role: harness.RoleAssistant, ToolCalls: calls[:2]},
		{Role: harness.RoleTool, Name: "get_price", Content: `{"price": 99}`},
		{Role: harness.RoleTool, Name: "send_coupon", Content: `{"ok": true}`},
		{Role: harness.RoleAssistant, Content: "99元。"},
	}
	before, _ := json.Marshal(msgs)
	opts := Options{Gold: gold}
	for seed := range int64(40) {
		variant, rec, err := Augment(old, PoolTrain, seed, 6, opts)
		if err != nil {
			t.Fatal(err)
		}
		if seed%2 == 1 {
			variant, rec, err = Augment(old, PoolHeldOut, seed, 4, opts)
			if err != nil {
				t.Fatal(err)
			}
		}
		m := rec.Mapping()
		out, err := MapTranscript(old, variant, m, msgs)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if after, _ := json.Marshal(msgs); string(after) != string(before) {
			t.Fatal("MapTranscript changed its input")
		}
		sc, err := schemas(variant)
		if err != nil {
			t.Fatal(err)
		}
		for i, msg := range out {
			for _, tc := range msg.ToolCalls {
				c, err := CallOf(tc)
				if err != nil {
					t.Fatal(err)
				}
				if err := checkCall(sc, c); err != nil {
					t.Errorf("seed %d: message %d: %v", seed, i, err)
				}
			}
			if msg.Role == harness.RoleTool {
				if _, ok := variant.Tool(msg.Name); !ok {
					t.Errorf("seed %d: tool turn %d names %q, which the variant lacks", seed, i, msg.Name)
				}
			}
		}
		mapped, _ := CallOf(out[1].ToolCalls[0])
		id, _ := mapped.Arguments[variant.LoadSkillParamName()].(string)
		ns, ok := variant.Skill(id)
		if !ok || out[2].Content != harness.SkillContent(ns)+"\n\nplugin extra" {
			t.Errorf("seed %d: load-skill result not re-rendered:\n%s", seed, out[2].Content)
		}
		if out[6].Content != "99元。" {
			t.Errorf("seed %d: reply changed", seed)
		}
	}
	bad := append([]harness.Message(nil), msgs...)
	bad[4].Name = "other"
	if _, err := MapTranscript(old, old, Mapping{}, bad); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("mismatched tool result: got %v", err)
	}
	if _, err := MapTranscript(old, old, Mapping{}, msgs[2:3]); err == nil {
		t.Error("tool result without a call: want an error")
	}
	if _, err := CallOf(harness.ToolCall{Name: "x", Arguments: json.RawMessage(`[1]`)}); err == nil {
		t.Error("non-object arguments: want an error")
	}
}
