package main

import (
	"os"
	"testing"
	"time"

	"github.com/livehat/livehat/sdk"
)

// benchInput matches the ~200-byte hook input of plugins' BenchmarkGoHook.
var benchInput = []byte(`{"event":"after_response","stream":"demo-beauty-stream","session":"s-42","viewer":{"id":"v-1001","name":"小鹿"},"text":"这款玻尿酸精华现在199元，原价299元，保湿效果很好，适合干皮和混合皮。","reply_chars":120}`)

// BenchmarkNativeHook is the compliance hook's work as native Go, with
// the catalog decoded from its JSON as the host would send it: the
// denominator of the wasm/native ratio.
func BenchmarkNativeHook(b *testing.B) {
	raw, err := os.ReadFile("../catalog.json")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 21, 40, 0, 0, time.UTC)
	b.ReportAllocs()
	for range b.N {
		in, err := sdk.DecodeHookInput(benchInput)
		if err != nil {
			b.Fatal(err)
		}
		cfg, _ := ParseConfig(in.Config)
		c, err := sdk.DecodeCatalogResult(raw)
		if err != nil {
			b.Fatal(err)
		}
		m := FindMentions(in.Text, c.Products)
		AddOffers(m, c.Coupons, c.Promotions, now)
		_ = Decide(in.Text, Check(in.Text, m, cfg), cfg).AppendJSON(nil)
	}
}
