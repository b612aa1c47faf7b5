package main

import (
	"testing"

	"github.com/livehat/livehat/sdk"
)

// benchInput matches the ~200-byte hook input of plugins' BenchmarkGoHook.
var benchInput = []byte(`{"event":"after_response","stream":"demo-beauty-stream","session":"s-42","viewer":{"id":"v-1001","name":"小鹿"},"text":"这款玻尿酸精华现在199元，原价299元，保湿效果很好，适合干皮和混合皮。","reply_chars":120}`)

// BenchmarkNativeHook is the speech hook's work as native Go, with the
// SDK's decoding and encoding: the denominator of the wasm/native ratio.
func BenchmarkNativeHook(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		in, err := sdk.DecodeHookInput(benchInput)
		if err != nil {
			b.Fatal(err)
		}
		cfg, _ := ParseConfig(in.Config)
		d := Fit(in.Text, in.ReplyChars, cfg)
		_ = d.AppendJSON(nil)
	}
}
