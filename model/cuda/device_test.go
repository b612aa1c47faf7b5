package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
	"github.com/livehat/livehat/model/cuda/internal/nvrtc"
)

// TestOpenWithoutDriver checks the path of every machine without a GPU:
// Open returns an error wrapping ErrNoDriver that names the library, and
// the process carries on.
func TestOpenWithoutDriver(t *testing.T) {
	d, err := Open(Options{})
	if err == nil {
		d.Close()
		t.Skip("a GPU is present; the no-driver path cannot be exercised here")
	}
	if !errors.Is(err, driver.ErrNoDriver) {
		t.Skipf("a driver is installed but unusable here: %v", err)
	}
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Errorf("Open without a driver: %v", err)
	}
}

func TestBackendName(t *testing.T) {
	for in, want := range map[string]string{"": "cpu", "cpu": "cpu", " CUDA ": "cuda", "gpu": "cuda"} {
		got, err := parseBackendName(in)
		if err != nil || got != want {
			t.Errorf("parseBackendName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseBackendName("metal"); err == nil || !strings.Contains(err.Error(), "LIVEHAT_BACKEND") {
		t.Errorf("unknown backend: %v", err)
	}
	t.Setenv("LIVEHAT_BACKEND", "cuda")
	if n, err := BackendName(); n != "cuda" || err != nil {
		t.Errorf("BackendName with LIVEHAT_BACKEND=cuda: %q, %v", n, err)
	}
}

func TestTargetFits(t *testing.T) {
	h := nvrtc.Arch{Major: 9, Minor: 0}
	for target, want := range map[string]bool{
		"sm_90": true, "sm_80": true, "sm_75": true, "sm_90a": true, "sm_100": false, "sm_89": true,
		"sm_120": false, "": false, "sm_": false, "compute_90": false,
	} {
		if got := targetFits(target, h); got != want {
			t.Errorf("targetFits(%q, 9.0) = %v", target, got)
		}
	}
	if targetFits("sm_90", nvrtc.Arch{Major: 8, Minor: 9}) {
		t.Error("sm_90 PTX accepted on an 8.9 device")
	}
}

func TestCheckArgs(t *testing.T) {
	ok := []arg{ptrArg(1), ptrArg(2), i32Arg(3)}
	if err := checkArgs(kernels.Argmax, ok); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
	for name, c := range map[string]struct {
		id   kernels.ID
		args []arg
		want string
	}{
		"count":   {kernels.Argmax, ok[:2], "takes 3 arguments"},
		"kind":    {kernels.Argmax, []arg{ptrArg(1), ptrArg(2), f32Arg(3)}, "argument 2 is a int"},
		"null":    {kernels.Argmax, []arg{ptrArg(0), ptrArg(2), i32Arg(3)}, "null pointer"},
		"unknown": {kernels.NumKernels, ok, "unknown kernel"},
		"double":  {kernels.RoPE, []arg{ptrArg(1), ptrArg(2), i32Arg(1), i32Arg(2), f32Arg(1)}, "is a double"},
	} {
		if err := checkArgs(c.id, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if a := i32Arg(-2); a.bits != 0xfffffffe {
		t.Errorf("i32Arg(-2) bits %#x: the high half must stay clear", a.bits)
	}
}

func TestInfoString(t *testing.T) {
	s := Info{Name: "NVIDIA H200", Major: 9, SMs: 132, MemoryBytes: 141 << 30, DriverVersion: 12040, Kernels: "NVRTC 12.4", CUBLAS: "libcublas.so.12"}.String()
	for _, want := range []string{"NVIDIA H200", "sm_90", "132 SMs", "141.0 GiB", "CUDA 12.4", "NVRTC 12.4", "libcublas.so.12"} {
		if !strings.Contains(s, want) {
			t.Errorf("Info.String() = %q lacks %q", s, want)
		}
	}
}

// FuzzTargetFits checks the .target parser on arbitrary strings: no
// panics, and a target that fits a device fits every newer one.
func FuzzTargetFits(f *testing.F) {
	for _, s := range []string{"sm_90", "sm_90a", "sm_100", "sm_7", "sm_", "", "sm_x0", "sm_-10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		if targetFits(target, nvrtc.Arch{Major: 8, Minor: 0}) && !targetFits(target, nvrtc.Arch{Major: 9, Minor: 0}) {
			t.Errorf("%q fits 8.0 but not 9.0", target)
		}
	})
}
