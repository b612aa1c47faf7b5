package driver

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestSymbolTableCoversEveryEntryPoint(t *testing.T) {
	table := symbols()
	if len(table) != int(numFns) {
		t.Fatalf("symbol table has %d entries for %d entry points", len(table), numFns)
	}
	valid := regexp.MustCompile(`^cu[A-Z][A-Za-z0-9]*(_v[0-9])?$`)
	seen := map[string]bool{}
	for i, s := range table {
		if len(s.Names) == 0 {
			t.Errorf("entry point %d has no symbol name", i)
			continue
		}
		if s.Optional {
			t.Errorf("%s is optional; the driver binding needs every symbol", s.Names[0])
		}
		for _, n := range s.Names {
			if !valid.MatchString(n) {
				t.Errorf("entry point %d: %q is not a driver API name", i, n)
			}
			if seen[n] {
				t.Errorf("%s bound twice", n)
			}
			seen[n] = true
		}
	}
	// Names whose unversioned form cuda.h maps to a versioned one must be
	// bound by the versioned name, or a CUDA 12/13 driver gives the
	// legacy (CUDA 3.x era, 32-bit size) behaviour.
	for _, want := range []string{
		"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2",
		"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2", "cuMemsetD32_v2",
		"cuMemGetInfo_v2", "cuDeviceTotalMem_v2", "cuStreamDestroy_v2", "cuEventDestroy_v2",
		"cuDevicePrimaryCtxRelease_v2", "cuStreamBeginCapture_v2", "cuGraphInstantiateWithFlags",
		"cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuLaunchKernel", "cuModuleLoadData",
	} {
		if !seen[want] {
			t.Errorf("%s is not bound", want)
		}
	}
	for _, banned := range []string{"cuMemAlloc", "cuMemFree", "cuCtxCreate", "cuCtxCreate_v2", "cuGraphInstantiate", "cuStreamBeginCapture"} {
		if seen[banned] {
			t.Errorf("%s is bound; use the versioned or primary-context form", banned)
		}
	}
	if names := SymbolNames(); len(names) != int(numFns) || names[fnEventElapsedTime] != "cuEventElapsedTime_v2" {
		t.Errorf("SymbolNames = %v", names)
	}
}

// TestEveryBoundSymbolIsCalled parses the package and checks that each
// entry point of the table is passed to call (or used by the error path),
// and that call is never given something that is not an fn constant, so
// the table and the code using it cannot drift apart.
func TestEveryBoundSymbolIsCalled(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	used := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for _, id := range n.Names {
					if strings.HasPrefix(id.Name, "fn") && id.Name != "numFns" {
						consts[id.Name] = true
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "call" && len(n.Args) > 0 {
					id, ok := n.Args[0].(*ast.Ident)
					if !ok || !strings.HasPrefix(id.Name, "fn") {
						t.Errorf("%s: call with %T, want an fn constant", fset.Position(n.Pos()), n.Args[0])
						return true
					}
					used[id.Name] = true
				}
			case *ast.IndexExpr:
				// d.addrs[fnGetErrorName]: the error path calls directly.
				if id, ok := n.Index.(*ast.Ident); ok && strings.HasPrefix(id.Name, "fn") {
					if sel, ok := n.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "addrs" {
						used[id.Name] = true
					}
				}
			}
			return true
		})
	}
	if len(consts) != int(numFns) {
		t.Errorf("found %d fn constants in the source, numFns is %d", len(consts), numFns)
	}
	for c := range consts {
		if !used[c] {
			t.Errorf("%s is bound but never called", c)
		}
	}
	for u := range used {
		if !consts[u] {
			t.Errorf("%s is called but is not a bound entry point", u)
		}
	}
}

func TestErrorNames(t *testing.T) {
	cases := map[Result]string{
		0:     "CUDA_SUCCESS",
		2:     "CUDA_ERROR_OUT_OF_MEMORY",
		100:   "CUDA_ERROR_NO_DEVICE",
		218:   "CUDA_ERROR_INVALID_PTX",
		222:   "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
		700:   "CUDA_ERROR_ILLEGAL_ADDRESS",
		901:   "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
		12345: "CUresult(12345)",
		-1:    "CUresult(-1)",
	}
	for code, want := range cases {
		if got := code.Name(); got != want {
			t.Errorf("Result(%d).Name() = %q, want %q", code, got, want)
		}
	}
	for code, name := range resultNames() {
		if !strings.HasPrefix(name, "CUDA_") {
			t.Errorf("code %d named %q", code, name)
		}
	}
	err := error(&Error{Op: "cuMemAlloc_v2", Code: ErrorOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory"})
	if got := err.Error(); got != "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" {
		t.Errorf("Error() = %q", got)
	}
	wrapped := errors.Join(errors.New("loading weights"), err)
	if !IsCode(wrapped, ErrorOutOfMemory) || IsCode(wrapped, ErrorInvalidValue) {
		t.Error("IsCode does not see through wrapping")
	}
	if !errors.Is(wrapped, &Error{Code: ErrorOutOfMemory}) {
		t.Error("errors.Is by code fails")
	}
}

func TestParamsPacking(t *testing.T) {
	var p Params
	p.Ptr(0x7f0012345600).I32(-3).Int(4096).U32(0xdeadbeef).F32(-1.5).I64(-1 << 40).U64(math.MaxUint64)
	if p.Len() != 7 {
		t.Fatalf("%d params, want 7", p.Len())
	}
	ptrs := p.pointers()
	if len(ptrs) != 7 {
		t.Fatalf("%d pointers", len(ptrs))
	}
	// Each pointer must point at its own slot, 8 bytes apart and 8-byte
	// aligned, and read back as the kernel reads its typed parameter.
	for i, a := range ptrs {
		if a != uintptr(unsafe.Pointer(&p.slots[i])) || a%8 != 0 {
			t.Errorf("pointer %d = %#x, slot at %p", i, a, &p.slots[i])
		}
	}
	at := func(i int) unsafe.Pointer { return unsafe.Pointer(&p.slots[i]) }
	if got := *(*uint64)(at(0)); got != 0x7f0012345600 {
		t.Errorf("pointer param reads %#x", got)
	}
	if got := *(*int32)(at(1)); got != -3 {
		t.Errorf("int param reads %d", got)
	}
	if got := *(*int32)(at(2)); got != 4096 {
		t.Errorf("int param reads %d", got)
	}
	if got := *(*uint32)(at(3)); got != 0xdeadbeef {
		t.Errorf("unsigned param reads %#x", got)
	}
	if got := *(*float32)(at(4)); got != -1.5 {
		t.Errorf("float param reads %v", got)
	}
	if got := *(*int64)(at(5)); got != -1<<40 {
		t.Errorf("long long param reads %d", got)
	}
	if got := p.Slot(6); got != math.MaxUint64 {
		t.Errorf("u64 slot %#x", got)
	}
	// A 4-byte parameter leaves the high half of its slot zero, so a
	// kernel that (wrongly) read 8 bytes would see a clean value.
	if p.Slot(1)>>32 != 0 {
		t.Errorf("int slot %#x has high bits set", p.Slot(1))
	}
	if p.Reset().Len() != 0 {
		t.Error("Reset left parameters")
	}
}

// TestNoDriver checks the path every GPU-less machine takes: Load fails
// with ErrNoDriver and a message naming the library, without exiting.
func TestNoDriver(t *testing.T) {
	d, err := Load()
	if err == nil {
		t.Skipf("a CUDA driver is installed here (%s); the no-driver path cannot be exercised", d.Path())
	}
	if !errors.Is(err, ErrNoDriver) {
		if strings.Contains(err.Error(), "driver too old") {
			t.Skipf("driver present but old: %v", err)
		}
		t.Fatalf("Load without a driver: %v, want ErrNoDriver", err)
	}
	if !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Errorf("error %q does not name libcuda.so.1", err)
	}
}

// TestDriverOnDevice runs the binding against a real driver; it skips
// where none loads.
func TestDriverOnDevice(t *testing.T) {
	skip := t.Skipf
	if os.Getenv("LIVEHAT_REQUIRE_GPU") != "" {
		skip = t.Fatalf
	}
	d, err := Load()
	if err != nil {
		skip("GPU test skipped: %v", err)
	}
	if err := d.Init(); err != nil {
		skip("GPU test skipped: cuInit: %v", err)
	}
	v, err := d.Version()
	if err != nil || v < 12000 {
		t.Fatalf("driver version %d, %v: want CUDA 12.0 or newer", v, err)
	}
	n, err := d.DeviceCount()
	if err != nil || n == 0 {
		skip("GPU test skipped: %d devices, %v", n, err)
	}
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := d.RetainPrimaryContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer d.ReleasePrimaryContext(dev)
	lockThread(t)
	if err := d.SetCurrent(ctx); err != nil {
		t.Fatal(err)
	}
	buf, err := d.Alloc(1024)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	src := []float32{1, 2, 3, 4}
	if err := CopyToDevice(d, buf, src); err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 4)
	if err := CopyFromDevice(d, dst, buf); err != nil {
		t.Fatal(err)
	}
	if dst[3] != 4 {
		t.Errorf("round trip %v", dst)
	}
	if err := d.Memset32(buf, math.Float32bits(7), 4); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(d, dst, buf); err != nil || dst[0] != 7 {
		t.Errorf("memset: %v %v", dst, err)
	}
	// An invalid image is a named error, not a crash.
	_, err = d.LoadModule([]byte("not ptx"))
	var e *Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Name, "CUDA_ERROR_") {
		t.Errorf("loading garbage: %v", err)
	}
	if os.Getenv("LIVEHAT_CUDA_VERBOSE") != "" {
		name, _ := d.DeviceName(dev)
		t.Logf("device %s, driver %d", name, v)
	}
}

// lockThread keeps the test on one OS thread, where the context is current.
func lockThread(t *testing.T) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}
