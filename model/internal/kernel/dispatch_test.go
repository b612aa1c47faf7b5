package kernel

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestChooseKernels(t *testing.T) {
	avail := []string{"avx512", "avx2", "purego"}
	cases := []struct {
		value, want, err string
	}{
		{"", "avx512", ""},
		{"auto", "avx512", ""},
		{" avx2 ", "avx2", ""},
		{"purego", "purego", ""},
		{"neon", "", "LIVEHAT_KERNELS=neon: this CPU or build lacks it; available here: avx512, avx2, purego"},
		{"AVX2", "", `LIVEHAT_KERNELS="AVX2": no such kernel set; want auto or one of avx512, avx2, neon, purego`},
		{"sse", "", `no such kernel set`},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			got, err := chooseKernels(c.value, avail)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("chooseKernels(%q) = %q, %v; want an error containing %q", c.value, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("chooseKernels(%q) = %q, %v; want %q", c.value, got, err, c.want)
			}
		})
	}
	if got, err := chooseKernels("", []string{"purego"}); err != nil || got != "purego" {
		t.Errorf("a build with only the portable set chose %q, %v", got, err)
	}
}

// TestKernelsEnv runs this test binary again with KernelsEnv set: every
// available set is the one in use, and an unknown or unavailable one stops
// the program at start-up with a message that names the variable.
func TestKernelsEnv(t *testing.T) {
	if os.Getenv("LIVEHAT_KERNELS_CHILD") == "1" {
		os.Stdout.WriteString("kernels in use: " + Kernels() + "\n")
		return
	}
	if testing.Short() {
		t.Skip("starts the test binary once per kernel set")
	}
	run := func(value string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKernelsEnv$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LIVEHAT_KERNELS_CHILD=1", KernelsEnv+"="+value)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, set := range []string{"avx512", "avx2", "neon", "purego"} {
		out, err := run(set)
		if strings.Contains(out, "kernels in use: ") {
			if err != nil || !strings.Contains(out, "kernels in use: "+set+"\n") {
				t.Errorf("%s=%s: %v\n%s", KernelsEnv, set, err, out)
			}
			continue
		}
		if err == nil || !strings.Contains(out, KernelsEnv+"="+set+": this CPU or build lacks it") {
			t.Errorf("%s=%s neither ran nor said why: %v\n%s", KernelsEnv, set, err, out)
		}
	}
	if out, err := run("fastest"); err == nil || !strings.Contains(out, `LIVEHAT_KERNELS="fastest": no such kernel set`) {
		t.Errorf("an unknown kernel set did not stop the program: %v\n%s", err, out)
	}
}

// FuzzChooseKernels checks that any value of the environment variable
// either selects one of the available sets or is refused with an error
// that names the variable.
func FuzzChooseKernels(f *testing.F) {
	for _, v := range []string{"", "auto", "avx2", " avx512\t", "neon", "PUREGO", "avx512,avx2", "\x00"} {
		f.Add(v)
	}
	avail := []string{"avx512", "avx2", "purego"}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := chooseKernels(value, avail)
		if err != nil {
			if got != "" || !strings.Contains(err.Error(), KernelsEnv) {
				t.Fatalf("chooseKernels(%q) = %q, %v", value, got, err)
			}
			return
		}
		if !slices.Contains(avail, got) {
			t.Fatalf("chooseKernels(%q) = %q, not an available set", value, got)
		}
	})
}
