// Command genptx compiles the backend's kernel modules to PTX with nvcc and
// writes them to ptx/ beside the sources, each headed by the sha256 of the
// module source it was made from. Run it with go generate in
// model/cuda/internal/kernels on a machine with the CUDA toolkit:
//
//	go generate ./model/cuda/internal/kernels
//
// The target is compute_90 (H20/H200) unless -arch says otherwise. Build
// with the oldest toolkit the deployment supports: PTX from a newer nvcc
// carries a newer .version that older drivers refuse
// (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), in which case the backend falls
// back to NVRTC.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/livehat/livehat/model/cuda/internal/kernels"
)

func main() {
	arch := flag.String("arch", "compute_90", "virtual architecture for nvcc -arch")
	out := flag.String("out", "ptx", "output directory")
	nvcc := flag.String("nvcc", "nvcc", "nvcc executable")
	flag.Parse()
	if err := run(*nvcc, *arch, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genptx:", err)
		os.Exit(1)
	}
}

func run(nvcc, arch, out string) error {
	if _, err := exec.LookPath(nvcc); err != nil {
		return fmt.Errorf("%s not found (the CUDA toolkit is needed to generate PTX; without it the backend compiles with NVRTC at run time): %w", nvcc, err)
	}
	tmp, err := os.MkdirTemp("", "genptx")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, file := range kernels.Files() {
		src, hash, err := kernels.Source(file)
		if err != nil {
			return err
		}
		in := filepath.Join(tmp, file)
		ptx := filepath.Join(tmp, file+".ptx")
		if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
			return err
		}
		cmd := exec.Command(nvcc, "-ptx", "-arch="+arch, "-O3", "-std=c++17", "-o", ptx, in)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("nvcc %s: %w", file, err)
		}
		body, err := os.ReadFile(ptx)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, filepath.Base(kernels.PTXName(file)))
		if err := os.WriteFile(dst, append([]byte(kernels.PTXHeader+hash+"\n"), body...), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s → %s (%s)\n", file, dst, kernels.PTXTarget(body))
	}
	return nil
}
