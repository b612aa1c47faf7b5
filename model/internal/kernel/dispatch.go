package kernel

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// KernelsEnv names the environment variable that chooses the kernel set:
// empty or "auto" for the best one the CPU and the build support, or one of
// "avx512", "avx2", "neon" and "purego" to force it (to compare them, or to
// rule one out). A set the CPU or the build lacks is an error, not a silent
// fallback, so that a test run forced to a set really ran it.
const KernelsEnv = "LIVEHAT_KERNELS"

// kernelSetNames lists every kernel set of every build, best first.
var kernelSetNames = []string{"avx512", "avx2", "neon", "purego"}

// chooseKernels returns the kernel set that value (the environment
// variable's) asks for, given the sets available here, best first.
func chooseKernels(value string, available []string) (string, error) {
	v := strings.TrimSpace(value)
	if v == "" || v == "auto" {
		return available[0], nil
	}
	if slices.Contains(available, v) {
		return v, nil
	}
	if !slices.Contains(kernelSetNames, v) {
		return "", fmt.Errorf("kernel: %s=%q: no such kernel set; want auto or one of %s",
			KernelsEnv, value, strings.Join(kernelSetNames, ", "))
	}
	return "", fmt.Errorf("kernel: %s=%s: this CPU or build lacks it; available here: %s",
		KernelsEnv, v, strings.Join(available, ", "))
}

// mustChooseKernels is chooseKernels on the environment variable, for the
// one-time selection at start-up, where a bad value cannot be returned.
func mustChooseKernels(available []string) string {
	name, err := chooseKernels(os.Getenv(KernelsEnv), available)
	if err != nil {
		panic(err)
	}
	return name
}
