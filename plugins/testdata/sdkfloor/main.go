// Command sdkfloor measures the fixed costs of a standard-Go guest for
// the benchmarks: reading the input, decoding it with the SDK, a hook
// that does nothing, and the price of a loop iteration and of a function
// call under the deadline sandbox, and a byte loop and a jsonx scan over
// the input.
package main

import (
	pdk "github.com/extism/go-pdk"

	"github.com/livehat/livehat/sdk"
	"github.com/livehat/livehat/sdk/jsonx"
)

//go:wasmexport allow
func allow() int32 {
	return sdk.Hook(func(in *sdk.HookInput) sdk.Decision { return sdk.Allow() })
}

//go:wasmexport count
func count() int32 {
	return sdk.Hook(func(in *sdk.HookInput) sdk.Decision {
		n := 0
		for _, r := range in.Text {
			if r > 0x2E80 {
				n++
			}
		}
		if n > 1000 {
			return sdk.Deny("too long")
		}
		return sdk.Allow()
	})
}

func main() {}

//go:wasmexport raw_input
func rawInput() int32 {
	in := pdk.Input()
	if len(in) > 1<<20 {
		return 1
	}
	pdk.OutputString(`{"action":"allow"}`)
	return 0
}

//go:wasmexport decode_only
func decodeOnly() int32 {
	if _, err := sdk.DecodeHookInput(pdk.Input()); err != nil {
		return 1
	}
	pdk.OutputString(`{"action":"allow"}`)
	return 0
}

var sinkN int

//go:wasmexport loop1000
func loop1000() int32 {
	n := 0
	for i := 0; i < 1000; i++ {
		n += i ^ sinkN
	}
	sinkN = n
	return 0
}

//go:noinline
func addOne(n int) int { return n + 1 }

//go:wasmexport calls1000
func calls1000() int32 {
	n := 0
	for i := 0; i < 1000; i++ {
		n = addOne(n)
	}
	sinkN = n
	return 0
}

//go:wasmexport scan_only
func scanOnly() int32 {
	in := pdk.Input()
	n := 0
	for _, c := range in {
		if c == '"' {
			n++
		}
	}
	sinkN = n
	return 0
}

//go:wasmexport reader_scan
func readerScan() int32 {
	r := jsonx.NewReader(pdk.Input())
	n := 0
	err := r.Object(func(k string) error {
		n += len(k)
		return r.Skip()
	})
	if err != nil {
		return 1
	}
	sinkN = n
	return 0
}
