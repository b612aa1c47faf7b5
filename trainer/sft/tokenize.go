package sft

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/tokenizer"
	"github.com/livehat/livehat/trainer/nn"
)

// ChatML markers the loss mask is found by.
const (
	assistantHeader = "<|im_start|>assistant\n"
	turnEnd         = "<|im_end|>"
)

// ScaffoldTokens are the chat-template strings a trained tokenizer keeps
// as single added tokens: the ChatML turn markers (special) and the tool
// and thinking tags (text, as in Qwen2's tokenizer.json), which every
// trajectory repeats many times.
func ScaffoldTokens() []string {
	return []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", chat.ToolCallOpen, chat.ToolCallClose,
		"<tool_response>", "</tool_response>", "<think>", "</think>"}
}

// Render writes a trajectory as the ChatML text (tools included) that the
// model is trained on.
func Render(t Trajectory, tmpl chat.Template) (string, error) {
	msgs, tools := t.ChatMessages()
	text, err := chat.Render(msgs, tools, chat.RenderOptions{Template: tmpl})
	if err != nil {
		return "", fmt.Errorf("sft: render %s: %w", t.ID, err)
	}
	return text, nil
}

// TrainTokenizer learns a byte-level BPE vocabulary of vocabSize on the
// rendered trajectories, with ScaffoldTokens as added tokens.
func TrainTokenizer(ctx context.Context, trajs []Trajectory, tmpl chat.Template, vocabSize int) (*tokenizer.Tokenizer, error) {
	texts := make([]string, 0, len(trajs))
	for _, t := range trajs {
		text, err := Render(t, tmpl)
		if err != nil {
			return nil, err
		}
		texts = append(texts, text)
	}
	corpus := func(yield func(string) bool) {
		for _, s := range texts {
			if !yield(s) {
				return
			}
		}
	}
	tok, err := tokenizer.Train(ctx, iter.Seq[string](corpus), tokenizer.TrainConfig{VocabSize: vocabSize, MinFrequency: 2, SpecialTokens: ScaffoldTokens()})
	if err != nil {
		return nil, fmt.Errorf("sft: train tokenizer: %w", err)
	}
	return withAddedTokens(tok, nil)
}

// Tokenize renders a trajectory and encodes it with a loss mask on the
// assistant turns only: each turn's text and its closing <|im_end|> are
// trained, the headers, system prompt, user and tool turns are not, and
// neither is a turn whose Train flag is false. Pieces are encoded
// separately at the turn boundaries, as the engine sees them when it
// generates after "<|im_start|>assistant\n".
func Tokenize(tok *tokenizer.Tokenizer, t Trajectory, tmpl chat.Template) (nn.Example, error) {
	text, err := Render(t, tmpl)
	if err != nil {
		return nn.Example{}, err
	}
	var trainTurn []bool
	for _, m := range t.Messages {
		if m.Role == chat.RoleAssistant {
			trainTurn = append(trainTurn, m.Train == nil || *m.Train)
		}
	}
	var ex nn.Example
	add := func(piece string, train bool) {
		ids := tok.EncodeWithSpecial(piece)
		ex.Tokens = append(ex.Tokens, ids...)
		for range ids {
			ex.Train = append(ex.Train, train)
		}
	}
	turn := 0
	for text != "" {
		i := strings.Index(text, assistantHeader)
		if i < 0 {
			add(text, false)
			break
		}
		add(text[:i+len(assistantHeader)], false)
		text = text[i+len(assistantHeader):]
		j := strings.Index(text, turnEnd)
		if j < 0 {
			return nn.Example{}, fmt.Errorf("sft: %s: assistant turn %d is not closed", t.ID, turn)
		}
		if turn >= len(trainTurn) {
			return nn.Example{}, fmt.Errorf("sft: %s: the rendered text has more assistant turns than the %d messages", t.ID, len(trainTurn))
		}
		add(text[:j+len(turnEnd)], trainTurn[turn])
		text = text[j+len(turnEnd):]
		turn++
	}
	if turn != len(trainTurn) {
		return nn.Example{}, fmt.Errorf("sft: %s: %d assistant turns rendered, %d in the messages", t.ID, turn, len(trainTurn))
	}
	if ex.Trained() == 0 {
		return nn.Example{}, fmt.Errorf("sft: %s: no trained token", t.ID)
	}
	return ex, nil
}
