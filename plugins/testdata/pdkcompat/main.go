// Command pdkcompat is a plugin written against the official Extism Go
// PDK only (no LiveHAT SDK), to prove that the host runs what the stock
// PDK builds: input, JSON output, errors, config, vars, logs and a user
// host function.
package main

import (
	"strings"

	pdk "github.com/extism/go-pdk"
)

//go:wasmimport extism:host/user livehat_catalog_lookup
func catalogLookup(offset uint64) uint64

//go:wasmexport count_vowels
func countVowels() int32 {
	in := pdk.InputString()
	n := 0
	for _, r := range in {
		if strings.ContainsRune("aeiouAEIOU", r) {
			n++
		}
	}
	total := pdk.GetVarInt("total") + n
	pdk.SetVarInt("total", total)
	pdk.Log(pdk.LogInfo, "counted "+in)
	greeting, _ := pdk.GetConfig("greeting")
	if err := pdk.OutputJSON(map[string]any{"count": n, "total": total, "greeting": greeting}); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

//go:wasmexport lookup
func lookup() int32 {
	q := pdk.AllocateBytes(pdk.Input())
	res := pdk.FindMemory(catalogLookup(q.Offset()))
	pdk.OutputMemory(res)
	return 0
}

//go:wasmexport fail
func fail() int32 {
	pdk.SetErrorString("nope: " + pdk.InputString())
	return 1
}

func main() {}
