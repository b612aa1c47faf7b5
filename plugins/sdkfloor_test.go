package plugins

import (
	"context"
	"testing"

	"github.com/livehat/livehat/harness"
)

// BenchmarkSDKFloor is the fixed cost of a standard-Go guest under the
// deadline sandbox: raw_input reads the input with the official PDK and
// writes a constant; decode_only adds the SDK's HookInput decoding;
// allow is a complete SDK hook that does nothing; count walks the text.
func BenchmarkSDKFloor(b *testing.B) {
	m := &Manifest{ABI: ABIVersion, Name: "sdk-floor", Version: "1.0.0", Wasm: WasmRef{File: "f.wasm"},
		Hooks: []HookSpec{{Name: "allow", Event: harness.EventAfterResponse}, {Name: "count", Event: harness.EventAfterResponse}, {Name: "raw_input", Event: harness.EventAfterResponse}, {Name: "decode_only", Event: harness.EventAfterResponse}}}
	for _, e := range []string{"raw_input", "decode_only", "allow", "count"} {
		b.Run(e, func(b *testing.B) {
			h := newTestHost(b, NewHostConfig())
			p := load(b, h, m, guestWasm(b, "sdkfloor"))
			in := benchInput(b)
			timed(b, func() error {
				_, err := p.Hook(context.Background(), nil, e, in)
				return err
			})
		})
	}
}
