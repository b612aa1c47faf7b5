// Command hostile is a plugin that misbehaves on purpose, one export per
// attack, for the host's hostile suite. It uses the official Extism Go
// PDK directly so that it does not depend on the SDK it attacks.
package main

import (
	"os"
	"strings"

	pdk "github.com/extism/go-pdk"
)

//go:wasmimport extism:host/user livehat_catalog_lookup
func catalogLookup(offset uint64) uint64

var sink [][]byte

//go:wasmexport ok
func ok() int32 {
	pdk.OutputString(`{"action":"allow"}`)
	return 0
}

//go:wasmexport spin
func spin() int32 {
	n := 0
	for {
		n++
	}
}

//go:wasmexport grow
func grow() int32 {
	for {
		sink = append(sink, make([]byte, 4<<20))
	}
}

func depth(n int) int {
	var pad [4096]byte // big frames reach the memory limit in few calls
	pad[n%4096] = byte(n)
	return depth(n+1) + int(pad[0])
}

//go:wasmexport recurse
func recurse() int32 {
	return int32(depth(0))
}

//go:wasmexport huge_output
func hugeOutput() int32 {
	pdk.OutputMemory(pdk.Allocate(4 << 20))
	return 0
}

//go:wasmexport panic
func panicky() int32 {
	panic("hostile plugin panicked on purpose")
}

//go:wasmexport exit
func exit() int32 {
	os.Exit(3)
	return 0
}

//go:wasmexport read_file
func readFile() int32 {
	var found []string
	for _, p := range []string{"/etc/passwd", "/etc/hostname", "/proc/self/environ", ".", "/"} {
		if b, err := os.ReadFile(p); err == nil {
			found = append(found, p+":"+string(b))
		}
		if entries, err := os.ReadDir(p); err == nil {
			for _, e := range entries {
				found = append(found, p+"/"+e.Name())
			}
		}
	}
	if err := os.WriteFile("/tmp/livehat-hostile", []byte("x"), 0o644); err == nil {
		found = append(found, "wrote /tmp/livehat-hostile")
	}
	pdk.OutputString(strings.Join(found, "\n"))
	return 0
}

//go:wasmexport read_env
func readEnv() int32 {
	pdk.OutputString(strings.Join(append(os.Environ(), os.Args...), "\n"))
	return 0
}

//go:wasmexport catalog
func catalog() int32 {
	q := pdk.AllocateString(`{"kind":"product","id":"p1"}`)
	pdk.OutputMemory(pdk.FindMemory(catalogLookup(q.Offset())))
	return 0
}

//go:wasmexport kv_flood
func kvFlood() int32 {
	for i := 0; ; i++ {
		pdk.SetVar(strings.Repeat("k", 8)+string(rune('a'+i%26))+string(rune('a'+i/26%26)), make([]byte, 1024))
	}
}

func main() {}
