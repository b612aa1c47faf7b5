package chat

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// goldenCase is one case of testdata/qwen3_golden.json. The want strings were
// produced by rendering the chat_template of Qwen3's tokenizer_config.json
// (../shared/data/tokenizers/qwen3/) with jinja2 3.1.6 configured as Hugging
// Face transformers configures it; testdata/qwen3_golden.py regenerates them.
type goldenCase struct {
	Name                string    `json:"name"`
	Messages            []Message `json:"messages"`
	Tools               []Tool    `json:"tools"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	EnableThinking      *bool     `json:"enable_thinking"`
	Want                string    `json:"want"`
}

func TestRenderMatchesQwen3Template(t *testing.T) {
	data, err := os.ReadFile("testdata/qwen3_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 8 {
		t.Fatalf("golden file holds %d cases, want at least 8", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			opts := RenderOptions{
				AddGenerationPrompt: c.AddGenerationPrompt,
				DisableThinking:     c.EnableThinking != nil && !*c.EnableThinking,
			}
			got, err := Render(c.Messages, c.Tools, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.Want {
				t.Errorf("rendered text differs from the Qwen3 template\n got: %q\nwant: %q", got, c.Want)
			}
		})
	}
}

func TestRenderVerbatimArguments(t *testing.T) {
	msgs := []Message{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, ToolCalls: []ToolCall{
		{Name: "f", Arguments: json.RawMessage(`{"a":1.50}`)}}}}
	got, err := Render(msgs, nil, RenderOptions{VerbatimArguments: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n" +
		"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\":1.50}}\n</tool_call><|im_end|>\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	got, err = Render(msgs, nil, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"arguments": {"a": 1.5}}`) {
		t.Errorf("default rendering should re-encode arguments as tojson does, got %q", got)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name     string
		messages []Message
		tools    []Tool
		wantErr  string
	}{
		{"unknown role", []Message{{Role: "developer", Content: "x"}}, nil, `message 0: unknown role "developer"`},
		{"quote in call name", []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: `a"b`, Arguments: json.RawMessage(`{}`)}}}}, nil, "needs JSON escaping"},
		{"empty call name", []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{Arguments: json.RawMessage(`{}`)}}}}, nil, "empty name"},
		{"bad arguments", []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "f", Arguments: json.RawMessage(`{"a":}`)}}}}, nil, `tool call 0 "f": arguments`},
		{"bad schema", nil, []Tool{{Name: "f", Parameters: json.RawMessage(`{"type": "object"} x`)}}, `tool 0 "f": parameters`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.messages, tt.tools, RenderOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestPyJSON checks the tojson re-encoding against outputs of Python's
// json.dumps(json.loads(in), ensure_ascii=False).
func TestPyJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1E20,"b":0.000,"c":-0,"d":1e-5,"e":123456789012345678901234567890,"f":1.0e2,"g":0.0001,"h":1e16,"i":123456.789e3,"j":-2.50}`,
			`{"a": 1e+20, "b": 0.0, "c": 0, "d": 1e-05, "e": 123456789012345678901234567890, "f": 100.0, "g": 0.0001, "h": 1e+16, "i": 123456789.0, "j": -2.5}`},
		{`["\u0001\u2028é\ud83d\ude00<>&\/",true,false,null,[],{}]`, "[\"\\u0001\u2028é😀<>&/\", true, false, null, [], {}]"},
		{` { "z" : { "y" : [ 1 , "\"\\\n\t" ] } } `, `{"z": {"y": [1, "\"\\\n\t"]}}`},
	}
	for _, tt := range tests {
		got, err := appendPyJSON(nil, []byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if string(got) != tt.want {
			t.Errorf("appendPyJSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a" 1}`, `[1,]`, `1 2`, `nul`} {
		if _, err := appendPyJSON(nil, []byte(bad)); err == nil {
			t.Errorf("appendPyJSON(%q) accepted invalid JSON", bad)
		}
	}
}

// TestRenderQwen25 checks the Qwen2.5 instruct template. The expected strings
// were written by reading that template (tokenizer_config.json of
// Qwen/Qwen2.5-*-Instruct): a default system prompt, the tools block after the
// system text, assistant text as is (no thinking), tool calls and results as in
// Qwen3.
func TestRenderQwen25(t *testing.T) {
	const sys = "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
	tool := Tool{Name: "now", Description: "time", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	tests := []struct {
		name     string
		messages []Message
		tools    []Tool
		want     string
	}{
		{"default system prompt", []Message{{Role: RoleUser, Content: "hi"}}, nil,
			sys + "<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
		{"own system prompt, thinking text kept as is", []Message{{Role: RoleSystem, Content: "S"}, {Role: RoleUser, Content: "q"},
			{Role: RoleAssistant, Content: "<think>\nr\n</think>\n\na"}, {Role: RoleUser, Content: "q2"}}, nil,
			"<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\nr\n</think>\n\na<|im_end|>\n" +
				"<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n"},
		{"tools with the default system prompt", []Message{{Role: RoleUser, Content: "t?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "now", Arguments: json.RawMessage(`{}`)}}}, {Role: RoleTool, Content: "12:00"}},
			[]Tool{tool},
			sys + "\n\n" + toolsHeader + "\n" + `{"type": "function", "function": {"name": "now", "description": "time", "parameters": {"type": "object", "properties": {}}}}` +
				toolsFooter + "<|im_start|>user\nt?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\n<tool_response>\n12:00\n</tool_response><|im_end|>\n<|im_start|>assistant\n"},
	}
	for _, tt := range tests {
		got, err := Render(tt.messages, tt.tools, RenderOptions{Template: Qwen25, AddGenerationPrompt: true, DisableThinking: true})
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
	if _, err := Render(nil, nil, RenderOptions{Template: 7}); err == nil {
		t.Error("unknown template accepted")
	}
}

func TestSplitThinking(t *testing.T) {
	tests := []struct{ in, reasoning, answer string }{
		{"<think>\nplan it\n</think>\n\nHello!", "plan it", "Hello!"},
		{"no thinking here", "", "no thinking here"},
		{"<think>\n\n</think>\n\nok", "", "ok"},
		{"<think>a</think>b</think>\nc", "a", "c"},
		{"stray</think>x", "stray", "x"},
	}
	for _, tt := range tests {
		r, a := SplitThinking(tt.in)
		if r != tt.reasoning || a != tt.answer {
			t.Errorf("SplitThinking(%q) = %q, %q; want %q, %q", tt.in, r, a, tt.reasoning, tt.answer)
		}
	}
}
