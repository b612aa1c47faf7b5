package model

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// qwen25Config is Qwen2.5-0.5B-Instruct's config.json as published.
const qwen25Config = `{
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "hidden_act": "silu",
  "hidden_size": 896,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 32768,
  "max_window_layers": 21,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
}`

// qwen3Config is Qwen3-0.6B's config.json as published.
const qwen3Config = `{
  "architectures": ["Qwen3ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 1024,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "max_position_embeddings": 40960,
  "max_window_layers": 28,
  "model_type": "qwen3",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
}`

func TestParseConfigMatchesPresets(t *testing.T) {
	for js, preset := range map[string]string{qwen25Config: "qwen2.5-0.5b", qwen3Config: "qwen3-0.6b"} {
		got, err := ParseConfig([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Preset(preset)
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", preset, got, want)
		}
		// Our own config.json parses back to the same config.
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseConfig(b)
		if err != nil || back != got {
			t.Errorf("%s: round trip gave %+v, %v", preset, back, err)
		}
	}
}

func TestParseConfigRejects(t *testing.T) {
	cases := map[string]struct{ key, value, want string }{
		"architecture": {"architectures", `["LlamaForCausalLM"]`, "unsupported architecture"},
		"heads":        {"num_key_value_heads", "3", "multiple"},
		"rope scaling": {"rope_theta", `1e6, "rope_scaling": {"type": "yarn", "factor": 4}`, "rope_scaling"},
		"activation":   {"hidden_act", `"gelu"`, "hidden_act"},
		"sliding":      {"use_sliding_window", "true", "sliding"},
		"zero layers":  {"num_hidden_layers", "0", "num_hidden_layers"},
		"eos":          {"eos_token_id", `"x"`, "eos_token_id"},
	}
	for name, c := range cases {
		re := regexp.MustCompile(`("` + c.key + `": )[^\n]*?(,?)\n`)
		js := re.ReplaceAllString(qwen25Config, "${1}"+c.value+"${2}\n")
		if js == qwen25Config {
			t.Fatalf("%s: edit did not apply", name)
		}
		_, err := ParseConfig([]byte(js))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", name, err, c.want)
		}
	}
	if _, err := ParseConfig([]byte(`{"architectures": ["Qwen2ForCausalLM"]}`)); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("config without sizes: err = %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(qwen25Config))
	f.Add([]byte(qwen3Config))
	f.Add([]byte(`{"architectures":["Qwen3ForCausalLM"],"hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":6,"vocab_size":9,"max_position_embeddings":4,"eos_token_id":[1,2]}`))
	f.Add([]byte(strings.Replace(qwen25Config, `"bos_token_id": 151643`, `"bos_token_id": -5`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseConfig(b)
		if err != nil || back != c {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, c)
		}
	})
}
