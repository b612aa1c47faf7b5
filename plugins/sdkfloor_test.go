package plugins

import (
	"context"
	"testing"

	"github.com/livehat/livehat/harness"
)

// BenchmarkSDKFloor is the fixed cost of a standard-Go guest under the
// deadline sandbox: raw_input reads the input with the official PDK and
// writes a constant; decode_only adds the SDK's HookInput decoding;
// allow is a complete SDK hook that does nothing; count walks the text;
// loop1000 and calls1000 price a loop iteration and a function call;
// scan_only loops over the input bytes and reader_scan skips through it
// with jsonx.
func BenchmarkSDKFloor(b *testing.B) {
	m := &Manifest{ABI: ABIVersion, Name: "sdk-floor", Version: "1.0.0", Wasm: WasmRef{File: "f.wasm"},
		Limits: Limits{TimeoutMS: 10000},
		Hooks:  []HookSpec{{Name: "allow", Event: harness.EventAfterResponse}, {Name: "count", Event: harness.EventAfterResponse}, {Name: "raw_input", Event: harness.EventAfterResponse}, {Name: "decode_only", Event: harness.EventAfterResponse}, {Name: "loop1000", Event: harness.EventAfterResponse}, {Name: "calls1000", Event: harness.EventAfterResponse}, {Name: "scan_only", Event: harness.EventAfterResponse}, {Name: "reader_scan", Event: harness.EventAfterResponse}}}
	for _, e := range []string{"raw_input", "decode_only", "allow", "count", "loop1000", "calls1000", "scan_only", "reader_scan"} {
		b.Run(e, func(b *testing.B) {
			h := newTestHost(b, NewHostConfig())
			p := load(b, h, m, guestWasm(b, "sdkfloor"))
			in := benchInput(b)
			timed(b, func() error {
				_, err := p.Call(context.Background(), nil, KindHook, e, in)
				return err
			})
		})
	}
}
