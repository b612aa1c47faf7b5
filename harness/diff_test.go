package harness

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	a, err := Load(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(a, a.Clone()); len(d) != 0 {
		t.Errorf("Diff of equal harnesses = %v", d)
	}
	b := a.Clone()
	b.Tools[2].Description = "Check the coupon."
	b.Skills = append(b.Skills[1:], b.Skills[0]) // price_answer moves to the end
	b.Hooks = b.Hooks[:2]                        // speech_length removed
	b.Pipeline.ReplyChars.Value = 90
	b.Layout.Sections[1].Items = append(b.Layout.Sections[1].Items, "Be kind.")
	got := FormatDiff(Diff(a, b))
	for _, want := range []string{
		`~ tools[coupon_check].description: "Check which coupon applies to an item and return the amount and the price after the coupon." → "Check the coupon."`,
		"~ skills[price_answer]: moved from position 1 to 7",
		`- hooks[speech_length]: {"name":"speech_length","event":"after_response"`,
		"~ pipeline.reply_chars.value: 120 → 90",
		`+ layout.sections[rules].items[4]: "Be kind."`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "moved"); n != 1 {
		t.Errorf("one skill moved but the diff reports %d moves:\n%s", n, got)
	}
	c := a.Clone()
	c.Tools = append(c.Tools, Tool{Name: "new_tool", Description: "d", Parameters: []byte(`{"type":"object"}`), Plugin: "p", Export: "e"})
	if got := FormatDiff(Diff(a, c)); !strings.HasPrefix(got, "+ tools[new_tool]:") {
		t.Errorf("added tool: %s", got)
	}
	if FormatDiff(nil) != "no changes\n" {
		t.Error("empty diff text")
	}
}
