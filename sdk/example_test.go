package sdk_test

import (
	"fmt"

	"github.com/livehat/livehat/sdk"
)

// A hook's logic is a plain function from a HookInput to a Decision, so
// it can be tested natively; sdk.Hook binds it to a wasm export.
func ExampleDecision() {
	screen := func(in *sdk.HookInput) sdk.Decision {
		if in.Viewer != nil && in.Viewer.Orders == 0 {
			return sdk.Inject("This viewer has never ordered: mention the new-viewer coupon.")
		}
		return sdk.Allow()
	}
	in, err := sdk.DecodeHookInput([]byte(`{"event":"viewer_message","viewer":{"id":"v1"},"text":"多少钱？"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(screen(in).AppendJSON(nil)))
	// Output:
	// {"action":"inject","context":"This viewer has never ordered: mention the new-viewer coupon."}
}
