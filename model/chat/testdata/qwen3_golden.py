"""Regenerates qwen3_golden.json: renders each case through the Qwen3 chat
template (chat_template of ../shared/data/tokenizers/qwen3/tokenizer_config.json)
with jinja2 set up as Hugging Face transformers sets it up (trim_blocks,
lstrip_blocks, and the tojson filter overridden by json.dumps with
ensure_ascii=False). Run from the repository root:

    python3 model/chat/testdata/qwen3_golden.py > model/chat/testdata/qwen3_golden.json
"""
import json, sys
import jinja2, jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

cfg = json.load(open("../shared/data/tokenizers/qwen3/tokenizer_config.json"))
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: json.dumps(
    x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
template = env.from_string(cfg["chat_template"])

weather = {"type": "object", "properties": {"city": {"type": "string", "description": "城市名, e.g. \"杭州\""},
           "unit": {"type": "string", "enum": ["c", "f"]}, "days": {"type": "integer", "minimum": 1, "maximum": 7}},
           "required": ["city"], "additionalProperties": False}
price = {"type": "object", "properties": {"sku": {"type": "string"}, "discount": {"type": "number", "minimum": 0.0,
         "maximum": 1e20, "multipleOf": 0.05, "default": 1.5e-7}, "tags": {"type": "array", "items": {"type": "string"}},
         "meta": {"type": "object", "properties": {"note": {"type": ["string", "null"]}}}}}
tools = [
    {"name": "get_weather", "description": "Get the weather\tforecast <for> a city & date.", "parameters": weather},
    {"name": "lookup_price", "description": "查询商品价格", "parameters": price},
]

cases = [
    {"name": "system_user_prompt", "messages": [
        {"role": "system", "content": "You are a live-stream host."},
        {"role": "user", "content": "Hello!\nHow are you?"}], "add_generation_prompt": True},
    {"name": "user_only", "messages": [{"role": "user", "content": "你好"}]},
    {"name": "tools_full_turn", "tools": tools, "messages": [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Weather in Hangzhou and the price of A1?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "杭州", "days": 2}},
            {"name": "lookup_price", "arguments": {"sku": "A1", "discount": 0.5, "tags": ["x", "y\n"], "meta": {"note": None}}}]},
        {"role": "tool", "content": "{\"temp\": 21}"},
        {"role": "tool", "content": "99 yuan"},
        {"role": "assistant", "content": "21°C, and A1 costs 99 yuan."},
        {"role": "user", "content": "Thanks"}], "add_generation_prompt": True},
    {"name": "tools_no_system_call_only", "tools": tools[:1], "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "get_weather", "arguments": {}}]},
        {"role": "tool", "content": "sunny"}], "add_generation_prompt": True},
    {"name": "thinking_history", "messages": [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "<think>\nold reasoning\n</think>\n\nfirst answer"},
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "<think>\nnew reasoning\n</think>\n\nsecond answer"}]},
    {"name": "multi_step_reasoning", "tools": tools[:1], "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "reasoning_content": "\nneed weather\n", "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}]},
        {"role": "tool", "content": "rain"},
        {"role": "user", "content": "<tool_response>\nextra\n</tool_response>"},
        {"role": "assistant", "content": "It rains.", "reasoning_content": "summarise"}], "add_generation_prompt": True},
    {"name": "no_thinking_prompt", "messages": [
        {"role": "user", "content": "quick"},
        {"role": "system", "content": "late system note"}], "add_generation_prompt": True, "enable_thinking": False},
    {"name": "assistant_last_plain", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "\n\nanswer", "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Oslo"}},
            {"name": "get_weather", "arguments": {"city": "Rome"}}]}]},
]

def hf_message(m):
    m = dict(m)
    if "tool_calls" in m:
        m["tool_calls"] = [{"type": "function", "function": c} for c in m["tool_calls"]]
    return m

out = []
for c in cases:
    kw = {"messages": [hf_message(m) for m in c["messages"]],
          "add_generation_prompt": c.get("add_generation_prompt", False)}
    if "tools" in c:
        kw["tools"] = [{"type": "function", "function": t} for t in c["tools"]]
    if "enable_thinking" in c:
        kw["enable_thinking"] = c["enable_thinking"]
    c = dict(c)
    c["want"] = template.render(**kw)
    out.append(c)
json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
sys.stdout.write("\n")
