package hsa

import (
	"errors"
	"fmt"

	"github.com/livehat/livehat/harness"
)

// PoolOperator holds the operator-style edits: what a stream's operator
// does to a harness in one sitting. Training applies them on top of a
// training-pool variant (Augment never draws them); their names and
// wording come from the training word and phrase banks, never the
// held-out ones.
const PoolOperator Pool = "operator"

// operatorEdit is an operator's edit of the tools and skills at once:
// every tool renamed with an open vocabulary of training-bank synonyms,
// abbreviations and styles, most of their arguments renamed (the argument
// map keeps the plugins' names), every tool described anew in other
// words, the tool list reordered, and the skills reworded.
func operatorEdit(h *harness.Harness, seed int64, opts Options) (*harness.Harness, Mapping, error) {
	const family = "operator-edit"
	v := newVariant(h, seed, opts)
	styles := []nameStyle{styleSnake, styleCamel}
	n := namer{
		tool:   func(old string) string { return naturalName(v.rng, old, trainWords, styles[v.rng.IntN(2)]) },
		param:  func(old string, style nameStyle) string { return naturalName(v.rng, old, trainWords, style) },
		styles: styles,
	}
	if err := renameTools(v, family, n, 1, 0.7); err != nil {
		return nil, Mapping{}, err
	}
	p := newParaphraser()
	for i := range v.h.Tools {
		t := &v.h.Tools[i]
		nu := p.paraphrase(v.rng, t.Description, 1)
		frames := operatorFrames(isChinese(t.Description))
		nu = fmt.Sprintf(frames[v.rng.IntN(len(frames))], nu)
		v.edit(fmt.Sprintf("tools[%s].description", t.Name), t.Description, nu)
		t.Description = nu
	}
	if shuffle(v.rng, v.h.Tools) {
		v.edit("tools", "", "reordered the tool list")
	}
	edited, m, err := v.done(family)
	if err != nil {
		return nil, Mapping{}, err
	}
	through, err := opts.through(m)
	if err != nil {
		return nil, Mapping{}, fmt.Errorf("%s: %w", family, err)
	}
	reworded, rm, err := skillReword(edited, v.rng.Int64(), through)
	switch {
	case errors.Is(err, ErrNotApplicable):
		return edited, m, nil
	case err != nil:
		return nil, Mapping{}, fmt.Errorf("%s: %w", family, err)
	}
	return reworded, m.Then(rm), nil
}

// operatorFrames are the ways operators write a tool's description in
// their own words, around its paraphrased text.
func operatorFrames(zh bool) []string {
	if zh {
		return []string{"%s", "运营备注：%s", "%s（运营已改写）", "用途：%s", "说明——%s", "本工具：%s"}
	}
	return []string{"%s", "Operator note: %s", "%s (as edited by the stream operator)", "Purpose: %s", "What it does — %s", "Use this tool for the following. %s"}
}
