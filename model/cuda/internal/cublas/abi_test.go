package cublas

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/livehat/livehat/model/cuda/internal/dl"
)

// TestGemmABI calls Gemm and GemmStridedBatched into a probe with the
// cuBLAS signatures and checks every argument as C received it, after the
// row-major mapping (operands swapped, m and n exchanged).
func TestGemmABI(t *testing.T) {
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
	addrs, err := lib.Resolve([]dl.Symbol{{Names: []string{"probe_gemm"}}, {Names: []string{"probe_gemm_batched"}}, {Names: []string{"probe_seen"}}})
	if err != nil {
		t.Fatal(err)
	}
	l := &Library{lib: lib, addrs: make([]uintptr, numFns)}
	l.addrs[fnGemmEx], l.addrs[fnGemmStridedBatchedEx] = addrs[0], addrs[1]
	seen := func(i int) int64 { return int64(dl.Call(addrs[2], uintptr(i))) }
	h := &Handle{l: l, h: 0xabc}

	a := Operand{Ptr: 0x1000, Type: R16BF, LD: 896}
	b := Operand{Ptr: 0x2000, Type: R16BF, LD: 896, Trans: true}
	if err := h.Gemm(5, 4864, 896, 1.5, a, b, 0, 0x3000, 4864); err != nil {
		t.Fatal(err)
	}
	// cuBLAS computes Cᵀ = op(B)ᵀ·op(A)ᵀ: B's operand and flag first.
	want := []int64{0xabc, 1, 0, 4864, 5, 896, 1500, 0x2000, 14, 896, 0x1000, 14, 896, 0, 0x3000, 0, 4864, 68, -1}
	for i, w := range want {
		if got := seen(i); got != w {
			t.Errorf("cublasGemmEx argument %d: C saw %d, want %d", i, got, w)
		}
	}

	if err := h.GemmStridedBatched(3, 7, 64, 0.25, a, 111, b, 222, 2, 0x3000, 7, 333, 14); err != nil {
		t.Fatal(err)
	}
	want = []int64{0xabc, 1, 0, 7, 3, 64, 250, 0x2000, 14, 896, 222, 0x1000, 14, 896, 111, 2000, 0x3000, 0, 7, 333, 14, 68, -1}
	for i, w := range want {
		if got := seen(i); got != w {
			t.Errorf("cublasGemmStridedBatchedEx argument %d: C saw %d, want %d", i, got, w)
		}
	}
}
