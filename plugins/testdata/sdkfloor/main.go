// Command sdkfloor is the lightest possible SDK hook, for benchmarks:
// it decodes the hook input and allows. Its cost is the SDK's floor.
package main

import (
	pdk "github.com/extism/go-pdk"
	"github.com/livehat/livehat/sdk"
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
