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

// TestDiffMoves checks what a reorder of tools reports, most of all that
// a move never reads "moved from position N to N".
func TestDiffMoves(t *testing.T) {
	tool := func(name string) Tool {
		return Tool{Name: name, Description: "d", Parameters: []byte(`{"type":"object"}`), Plugin: "p", Export: name}
	}
	list := func(names ...string) *Harness {
		h := &Harness{Name: "moves"}
		for _, n := range names {
			h.Tools = append(h.Tools, tool(n))
		}
		return h
	}
	for _, c := range []struct {
		name     string
		old, new []string
		want     []string
	}{
		{"swap of two", []string{"a", "b", "c"}, []string{"b", "a", "c"},
			[]string{"~ tools[a]: moved from position 1 to 2"}},
		{"one to the end", []string{"a", "b", "c", "d"}, []string{"b", "c", "d", "a"},
			[]string{"~ tools[a]: moved from position 1 to 4"}},
		{"the element that stays in place is not the one reported", []string{"x", "a", "b"}, []string{"b", "a", "y"},
			[]string{"- tools[x]", "~ tools[b]: moved from position 3 to 1", "+ tools[y]"}},
		{"removals before it leave a moved element at its position", []string{"z1", "z2", "x", "b", "c"}, []string{"b", "c", "x"},
			[]string{"- tools[z1]", "- tools[z2]", "~ tools[x]: moved after tools[c] (position 3 in both"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			changes := Diff(list(c.old...), list(c.new...))
			got := FormatDiff(changes)
			lines := strings.Split(strings.TrimSpace(got), "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("diff has %d lines, want %d:\n%s", len(lines), len(c.want), got)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d = %q, want it to start %q", i+1, lines[i], w)
				}
			}
			for _, ch := range changes {
				if ch.Kind == "moved" && ch.Old == ch.New && ch.After == "" {
					t.Errorf("%s moved from %v to %v and says nothing more", ch.Path, ch.Old, ch.New)
				}
			}
			if strings.Contains(got, "moved from position 3 to 3") {
				t.Errorf("diff reports a move to the same position:\n%s", got)
			}
		})
	}
}
