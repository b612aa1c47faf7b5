package hsa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/livehat/livehat/harness"
)

// CallOf decodes a chat tool call into a Call.
func CallOf(tc harness.ToolCall) (Call, error) {
	c := Call{Name: tc.Name, Arguments: map[string]any{}}
	if len(bytes.TrimSpace(tc.Arguments)) == 0 {
		return c, nil
	}
	dec := json.NewDecoder(bytes.NewReader(tc.Arguments))
	dec.UseNumber() // keep the number text of the gold exactly
	if err := dec.Decode(&c.Arguments); err != nil {
		return Call{}, fmt.Errorf("tool call %q: arguments are not a JSON object: %w", tc.Name, err)
	}
	if c.Arguments == nil {
		c.Arguments = map[string]any{}
	}
	return c, nil
}

// ToolCall encodes c as a chat tool call.
func (c Call) ToolCall() (harness.ToolCall, error) {
	args := c.Arguments
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return harness.ToolCall{}, fmt.Errorf("tool call %q: encode arguments: %w", c.Name, err)
	}
	return harness.ToolCall{Name: c.Name, Arguments: raw}, nil
}

// MapTranscript rewrites a gold transcript made under old into the one
// under variant, which m maps to: every assistant tool call is mapped,
// tool turns carry the new tool names, and the result of a load-skill
// call shows the variant's content of the skill (reworded, reordered or
// reformatted rules) in place of the old one. Replies are left to the
// trainer: see Mapping.Limits and FitReply. The input is not modified.
func MapTranscript(old, variant *harness.Harness, m Mapping, msgs []harness.Message) ([]harness.Message, error) {
	out := make([]harness.Message, len(msgs))
	var pending []Call // calls of the last assistant turn: old and mapped, in pairs
	for i, msg := range msgs {
		msg.ToolCalls = append([]harness.ToolCall(nil), msg.ToolCalls...)
		switch msg.Role {
		case harness.RoleAssistant:
			pending = pending[:0]
			for j, tc := range msg.ToolCalls {
				c, err := CallOf(tc)
				if err != nil {
					return nil, fmt.Errorf("map transcript: message %d: %w", i, err)
				}
				mc, err := m.Map(c)
				if err != nil {
					return nil, fmt.Errorf("map transcript: message %d: %w", i, err)
				}
				if msg.ToolCalls[j], err = mc.ToolCall(); err != nil {
					return nil, fmt.Errorf("map transcript: message %d: %w", i, err)
				}
				pending = append(pending, c, mc)
			}
		case harness.RoleTool:
			if len(pending) < 2 {
				return nil, fmt.Errorf("map transcript: message %d: a tool result without a pending tool call", i)
			}
			c, mc := pending[0], pending[1]
			pending = pending[2:]
			if msg.Name != c.Name {
				return nil, fmt.Errorf("map transcript: message %d: result of %q, but the pending call is %q", i, msg.Name, c.Name)
			}
			msg.Name = mc.Name
			msg.Content = mapSkillResult(old, variant, c, mc, msg.Content)
		}
		out[i] = msg
	}
	return out, nil
}

// mapSkillResult replaces the old content of a loaded skill by the new
// one, keeping whatever a plugin appended after it.
func mapSkillResult(old, variant *harness.Harness, c, mc Call, content string) string {
	if c.Name != old.LoadSkillToolName() || mc.Name != variant.LoadSkillToolName() {
		return content
	}
	id, _ := c.Arguments[old.LoadSkillParamName()].(string)
	nid, _ := mc.Arguments[variant.LoadSkillParamName()].(string)
	s, ok := old.Skill(id)
	ns, nok := variant.Skill(nid)
	if !ok || !nok {
		return content
	}
	prev := harness.SkillContent(s)
	if prev == "" || !strings.HasPrefix(content, prev) {
		return content
	}
	return harness.SkillContent(ns) + content[len(prev):]
}
