package hsa

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/livehat/livehat/harness"
)

func layoutReorder(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	if shuffle(v.rng, v.h.Layout.Sections) {
		v.edit("layout.sections", "", "reordered")
	}
	for i := range v.h.Layout.Sections {
		s := &v.h.Layout.Sections[i]
		if shuffle(v.rng, s.Items) {
			v.edit(fmt.Sprintf("layout.sections[%s].items", s.Key()), "", "reordered")
		}
	}
	if shuffle(v.rng, v.h.Tools) {
		v.edit("tools", "", "reordered")
	}
	return v.done("layout-reorder")
}

func (v *variant) setStyle(style harness.LayoutStyle) {
	if v.h.Layout.Style == style {
		return
	}
	v.edit("layout.style", string(v.h.Layout.Style), string(style))
	v.h.Layout.Style = style
}

func layoutStyle(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	styles := slices.DeleteFunc([]harness.LayoutStyle{harness.StyleMarkdown, harness.StylePlain},
		func(s harness.LayoutStyle) bool { return s == v.h.Layout.Style })
	v.setStyle(styles[v.rng.IntN(len(styles))])
	return v.done("layout-style")
}

// sectionRetitle retitles sections from a title bank; with a style it
// also switches the layout to that style.
func sectionRetitle(bank wordBank, style harness.LayoutStyle) applyFunc {
	family := "section-titles"
	if style != "" {
		family = "layout-xml"
	}
	return func(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
		v := newVariant(h, seed, opts)
		if style != "" {
			v.setStyle(style)
		}
		for i := range v.h.Layout.Sections {
			s := &v.h.Layout.Sections[i]
			if s.Title == "" {
				continue
			}
			zh := isChinese(s.Title)
			titles := slices.DeleteFunc(sectionTitles(string(s.Kind), zh, bank), func(t string) bool { return t == s.Title })
			if len(titles) == 0 {
				continue
			}
			nu := titles[v.rng.IntN(len(titles))]
			if !zh {
				nu = titleCase(v.rng, nu)
			}
			if nu == s.Title {
				continue
			}
			v.edit(fmt.Sprintf("layout.sections[%s].title", s.Key()), s.Title, nu)
			s.Title = nu
		}
		return v.done(family)
	}
}

// replyLengthMention finds a number followed by a length unit, e.g.
// "80 characters", "80字".
var replyLengthMention = regexp.MustCompile(`(\d+)(\s*)(characters|chars|个字|字)`)

// rewriteLimitMentions replaces mentions of the old reply-length limit in
// text, so the rules say the same as the pipeline.
func rewriteLimitMentions(text string, from, to int) string {
	old := strconv.Itoa(from)
	return replyLengthMention.ReplaceAllStringFunc(text, func(m string) string {
		sub := replyLengthMention.FindStringSubmatch(m)
		if sub[1] != old {
			return m
		}
		return strconv.Itoa(to) + sub[2] + sub[3]
	})
}

// jitterLimit moves l to another value in [max(lo, Min), Max], recording
// the change; it reports whether it moved.
func (v *variant) jitterLimit(name string, l *harness.Limit, lo int) bool {
	lo = max(lo, l.Min)
	if l.Max <= lo || l.Value < l.Min || l.Value > l.Max {
		return false
	}
	nu := lo + v.rng.IntN(l.Max-lo+1)
	if nu == l.Value {
		if nu < l.Max {
			nu++
		} else {
			nu--
		}
	}
	if nu < lo {
		return false
	}
	v.record(Step{Op: OpLimit, Limit: &LimitChange{Name: name, From: l.Value, To: nu}})
	l.Value = nu
	return true
}

func limitJitter(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	v := newVariant(h, seed, opts)
	p := &v.h.Pipeline
	tries := []func() bool{
		func() bool {
			from := p.ReplyChars.Value
			if !v.jitterLimit("reply_chars", &p.ReplyChars, 0) {
				return false
			}
			v.rewriteTexts(func(s string) string { return rewriteLimitMentions(s, from, p.ReplyChars.Value) })
			return true
		},
		func() bool { return v.jitterLimit("tool_rounds", &p.ToolRounds, opts.MinToolRounds) },
	}
	shuffle(v.rng, tries)
	both, moved := v.chance(0.5), false
	for _, try := range tries {
		if !moved || both {
			moved = try() || moved
		}
	}
	return v.done("limit-jitter")
}

// rewriteTexts applies f to every prose text of the harness.
func (v *variant) rewriteTexts(f func(string) string) {
	h := v.h
	h.Description = f(h.Description)
	for i := range h.Layout.Sections {
		s := &h.Layout.Sections[i]
		s.Text = f(s.Text)
		for j := range s.Items {
			s.Items[j] = f(s.Items[j])
		}
	}
	for i := range h.Skills {
		s := &h.Skills[i]
		s.Description, s.Instructions = f(s.Description), f(s.Instructions)
		for j := range s.Rules {
			s.Rules[j].Text = f(s.Rules[j].Text)
		}
	}
	for i := range h.Tools {
		h.Tools[i].Description = f(h.Tools[i].Description)
	}
}
