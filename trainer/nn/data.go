package nn

import (
	"errors"
	"fmt"
)

// Example is one training sequence.
type Example struct {
	// Tokens are the token ids.
	Tokens []int
	// Train[i] reports whether Tokens[i] is a target, predicted from
	// Tokens[:i] (Train[0] is ignored: nothing predicts the first token).
	// Nil trains every token, as plain language modelling does; a chat
	// example sets it only on the assistant's tokens.
	Train []bool
}

// Trained counts the example's target tokens.
func (e Example) Trained() int {
	if e.Train == nil {
		return max(len(e.Tokens)-1, 0)
	}
	n := 0
	for i := 1; i < len(e.Train); i++ {
		if e.Train[i] {
			n++
		}
	}
	return n
}

// pack concatenates examples into one batch without padding.
func pack(examples []Example, maxLen int) (*batch, error) {
	if len(examples) == 0 {
		return nil, errors.New("nn: empty batch")
	}
	b := &batch{}
	for i, e := range examples {
		L := len(e.Tokens)
		switch {
		case L == 0:
			return nil, fmt.Errorf("nn: example %d has no tokens", i)
		case L > maxLen:
			return nil, fmt.Errorf("nn: example %d has %d tokens, the model's context is %d", i, L, maxLen)
		case e.Train != nil && len(e.Train) != L:
			return nil, fmt.Errorf("nn: example %d has %d tokens and %d train flags", i, L, len(e.Train))
		}
		start := len(b.tokens)
		b.tokens = append(b.tokens, e.Tokens...)
		b.segs = append(b.segs, [2]int{start, start + L})
		for j := range L {
			b.pos = append(b.pos, j)
			lab := -1
			if j+1 < L && (e.Train == nil || e.Train[j+1]) {
				lab = e.Tokens[j+1]
			}
			b.labels = append(b.labels, lab)
			b.owner = append(b.owner, i)
		}
	}
	return b, nil
}

// Pack splits examples, in order, into micro-batches of at most maxTokens
// tokens each (an example longer than that gets a micro-batch of its own).
// Packing several short examples into one micro-batch costs nothing in
// accuracy: attention never crosses examples.
func Pack(examples []Example, maxTokens int) [][]Example {
	var out [][]Example
	var cur []Example
	n := 0
	for _, e := range examples {
		if len(cur) > 0 && n+len(e.Tokens) > maxTokens {
			out = append(out, cur)
			cur, n = nil, 0
		}
		cur = append(cur, e)
		n += len(e.Tokens)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
