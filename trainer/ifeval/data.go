package ifeval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Prompt is one line of IFEval's input_data.jsonl.
type Prompt struct {
	Key            int              `json:"key"`
	Prompt         string           `json:"prompt"`
	InstructionIDs []string         `json:"instruction_id_list"`
	Kwargs         []map[string]any `json:"kwargs"`
	// Line is the 1-based line of the source file (0 when built in code);
	// errors about the prompt name it.
	Line int `json:"-"`
}

// Response is one line of an IFEval input_response_data file.
type Response struct {
	Prompt   string `json:"prompt"`
	Response string `json:"response"`
	// Line is the 1-based line of the source file (0 when built in code).
	Line int `json:"-"`
}

// where names a prompt in error messages.
func (p Prompt) where() string {
	if p.Line > 0 {
		return fmt.Sprintf("prompt line %d (key %d)", p.Line, p.Key)
	}
	return fmt.Sprintf("prompt key %d", p.Key)
}

// LoadPrompts reads and validates an input_data.jsonl file.
func LoadPrompts(path string) ([]Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ifeval: %w", err)
	}
	defer f.Close()
	prompts, err := ReadPrompts(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return prompts, nil
}

// ReadPrompts reads and validates prompts in input_data.jsonl layout: one
// JSON object per line with key, prompt, instruction_id_list and kwargs.
// Blank lines are skipped; every instruction id must be known and its
// kwargs complete.
func ReadPrompts(r io.Reader) ([]Prompt, error) {
	var prompts []Prompt
	err := forEachLine(r, func(line int, data []byte) error {
		var p Prompt
		if err := json.Unmarshal(data, &p); err != nil {
			return fmt.Errorf("line %d: malformed prompt: %w", line, err)
		}
		p.Line = line
		if err := p.validate(); err != nil {
			return err
		}
		prompts = append(prompts, p)
		return nil
	})
	return prompts, err
}

// validate checks the instruction list against the registry.
func (p Prompt) validate() error {
	if len(p.InstructionIDs) == 0 {
		return fmt.Errorf("%s: empty instruction_id_list", p.where())
	}
	if len(p.Kwargs) != len(p.InstructionIDs) {
		return fmt.Errorf("%s: %d instruction ids but %d kwargs", p.where(), len(p.InstructionIDs), len(p.Kwargs))
	}
	for i, id := range p.InstructionIDs {
		if _, err := compileInstruction(id, p.Kwargs[i], nil); err != nil {
			return fmt.Errorf("%s: instruction %d: %w", p.where(), i, err)
		}
	}
	return nil
}

// LoadResponses reads an input_response_data file.
func LoadResponses(path string) ([]Response, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ifeval: %w", err)
	}
	defer f.Close()
	responses, err := ReadResponses(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return responses, nil
}

// ReadResponses reads responses in input_response_data layout: one
// {"prompt", "response"} object per line. Blank lines are skipped.
func ReadResponses(r io.Reader) ([]Response, error) {
	var responses []Response
	err := forEachLine(r, func(line int, data []byte) error {
		var raw struct {
			Prompt   *string `json:"prompt"`
			Response *string `json:"response"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return fmt.Errorf("line %d: malformed response: %w", line, err)
		}
		if raw.Response == nil {
			return fmt.Errorf("line %d: no \"response\" string", line)
		}
		resp := Response{Response: *raw.Response, Line: line}
		if raw.Prompt != nil {
			resp.Prompt = *raw.Prompt
		}
		responses = append(responses, resp)
		return nil
	})
	return responses, err
}

// forEachLine calls fn with every non-blank line and its 1-based number.
func forEachLine(r io.Reader, fn func(line int, data []byte) error) error {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		data, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(data)) > 0 {
			if ferr := fn(line, data); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}
