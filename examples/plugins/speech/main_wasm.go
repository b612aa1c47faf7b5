//go:build wasip1

package main

import "github.com/livehat/livehat/sdk"

//go:wasmexport fit_speech
func fitSpeech() int32 {
	return sdk.Hook(func(in *sdk.HookInput) sdk.Decision {
		cfg, err := ParseConfig(in.Config)
		if err != nil {
			return sdk.Deny("speech-length: bad hook config: " + err.Error())
		}
		return Fit(in.Text, in.ReplyChars, cfg)
	})
}
