//go:build wasip1

package main

import "github.com/livehat/livehat/sdk"

//go:wasmexport screen_message
func screenMessage() int32 {
	return sdk.Hook(func(in *sdk.HookInput) sdk.Decision {
		limit, err := ParseRepeatLimit(in.Config)
		if err != nil {
			return sdk.Deny("moderation: bad hook config: " + err.Error())
		}
		var h History
		key := ""
		if in.Viewer != nil && in.Viewer.ID != "" {
			key = "viewer:" + in.Viewer.ID
			if b, ok := sdk.Get(key); ok {
				h = DecodeHistory(b)
			}
			h = h.Next(in.Text)
			sdk.Set(key, h.Encode())
		}
		d := Decide(Screen(in.Text, h, limit))
		if d.Action == sdk.ActionDeny {
			sdk.Log(sdk.LogInfo, "dropped message of "+key+": "+d.Reason)
		}
		return d
	})
}
