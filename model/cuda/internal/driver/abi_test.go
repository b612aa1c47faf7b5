package driver

import (
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/cuda/internal/dl"
)

// probeDriver builds testdata/abiprobe.c into a shared library and returns
// a Driver whose launch and error entry points are the probe's.
func probeDriver(t *testing.T) (*Driver, func(string, ...uintptr) uint64) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the probe is built as a Linux shared library")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the ABI probe")
	}
	so := filepath.Join(t.TempDir(), "abiprobe.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", so, "testdata/abiprobe.c").CombinedOutput(); err != nil {
		t.Fatalf("building the probe: %v\n%s", err, out)
	}
	lib, err := dl.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"probe_launch", "probe_fail", "probe_error_name", "probe_error_string", "probe_expect_params", "probe_seen", "probe_param"}
	table := make([]dl.Symbol, len(names))
	for i, n := range names {
		table[i] = dl.Symbol{Names: []string{n}}
	}
	addrs, err := lib.Resolve(table)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]uintptr{}
	for i, n := range names {
		byName[n] = addrs[i]
	}
	d := &Driver{lib: lib, addrs: make([]uintptr, numFns)}
	d.addrs[fnLaunchKernel] = byName["probe_launch"]
	d.addrs[fnInit] = byName["probe_fail"]
	d.addrs[fnGetErrorName] = byName["probe_error_name"]
	d.addrs[fnGetErrorString] = byName["probe_error_string"]
	call := func(name string, args ...uintptr) uint64 { return uint64(dl.Call(byName[name], args...)) }
	return d, call
}

// TestLaunchABI launches through the real Launch into the probe and checks
// every argument as C received it: the grid and block in registers and on
// the stack, the stream, a null extra, and each kernel parameter read
// through the kernelParams pointer array.
func TestLaunchABI(t *testing.T) {
	d, call := probeDriver(t)
	var p Params
	p.Ptr(0x7f00deadbe00).I32(-7).F32(2.5).I64(-1 << 40).U64(math.MaxUint64 - 1)
	call("probe_expect_params", uintptr(p.Len()))
	err := d.Launch(Function(0x1234), Dim3{X: 70000, Y: 3, Z: 2}, Dim3{X: 256, Y: 4, Z: 1}, 4096, Stream(0x5678), &p)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x1234, 70000, 3, 2, 256, 4, 1, 4096, 0x5678, 0}
	for i, w := range want {
		if got := call("probe_seen", uintptr(i)); got != w {
			t.Errorf("cuLaunchKernel argument %d: C saw %#x, want %#x", i, got, w)
		}
	}
	for i := range p.Len() {
		if got := call("probe_param", uintptr(i)); got != p.Slot(i) {
			t.Errorf("kernel parameter %d: C read %#x through kernelParams, want %#x", i, got, p.Slot(i))
		}
	}
	if got := int32(uint32(call("probe_param", 1))); got != -7 {
		t.Errorf("int parameter reads %d", got)
	}
	if got := math.Float32frombits(uint32(call("probe_param", 2))); got != 2.5 {
		t.Errorf("float parameter reads %v", got)
	}
}

// TestErrorThroughDriver checks that a failing call becomes an *Error with
// the name and text the driver's cuGetErrorName/String give.
func TestErrorThroughDriver(t *testing.T) {
	d, _ := probeDriver(t)
	err := d.Init()
	if !IsCode(err, 700) {
		t.Fatalf("Init through the probe: %v", err)
	}
	for _, want := range []string{"cuInit", "CUDA_ERROR_ILLEGAL_ADDRESS", "illegal memory access"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
