package cuda

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/model"
	"github.com/livehat/livehat/model/cuda/internal/cublas"
	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
)

// The SIMT executor runs the real kernel sources, compiled as C++ by g++
// against testdata/simt/simt.h, on CPU threads (one per CUDA thread) in a
// subprocess. It is how the .cu files are executed and checked on machines
// without a GPU: against the emulator kernel by kernel, and as the whole
// Runner against the CPU backend.

// buildSIMT compiles the server with every kernel source, or skips.
func buildSIMT(t *testing.T) string {
	t.Helper()
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not installed: the kernel sources are executed only on a GPU")
	}
	var src strings.Builder
	common, err := kernels.RawSource("common.cuh")
	if err != nil {
		t.Fatal(err)
	}
	src.WriteString(common)
	for _, f := range kernels.Files() {
		body, err := kernels.RawSource(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&src, "\n#line 1 %q\n%s\n", f, body)
	}
	src.WriteString("\n#include <functional>\n#include <string>\n#include <unordered_map>\n#include <vector>\n")
	// The dispatch table, generated from the kernel table: each entry
	// unpacks the argument slots into the kernel's parameters.
	src.WriteString("#include \"slot.h\"\n")
	src.WriteString("std::unordered_map<std::string, std::function<void(const std::vector<Slot>&)>> kernels() {\n\treturn {\n")
	for _, s := range kernels.Table() {
		args := make([]string, len(s.Params))
		for i := range args {
			args[i] = fmt.Sprintf("a[%d]", i)
		}
		fmt.Fprintf(&src, "\t\t{%q, [](const std::vector<Slot>& a) { %s(%s); }},\n", s.Name, s.Name, strings.Join(args, ", "))
	}
	src.WriteString("\t};\n}\n")
	simt, err := filepath.Abs("testdata/simt")
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"-std=c++17", "-O1", "-ffp-contract=off", "-Wall", "-Wno-unknown-pragmas", "-I", simt, "-include", "simt.h"}
	// The binary is cached by the hash of everything it is built from, so
	// only a change to a kernel or to the emulator recompiles it.
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00%s\x00", cxx, flags, src.String())
	for _, f := range []string{"simt.h", "slot.h", "main.cpp"} {
		b, err := os.ReadFile(filepath.Join(simt, f))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s\x00%s\x00", f, b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "livehat", "simt", hex.EncodeToString(h.Sum(nil))[:24])
	bin := filepath.Join(dir, "simt")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	all := filepath.Join(dir, "kernels.cpp")
	if err := os.WriteFile(all, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := bin + ".tmp"
	cmd := exec.Command(cxx, append(flags, all, filepath.Join(simt, "main.cpp"), "-o", tmp)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the kernel sources as C++: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// simtExecutor is an executor backed by the SIMT server.
type simtExecutor struct {
	cmd       *exec.Cmd
	in        *bufio.Writer
	out       *bufio.Reader
	capturing bool
	recorded  []func() error
	graphs    map[driver.Graph][]func() error
	launches  int
}

func startSIMT(t *testing.T, bin string) *simtExecutor {
	t.Helper()
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	return &simtExecutor{cmd: cmd, in: bufio.NewWriter(stdin), out: bufio.NewReader(stdout), graphs: map[driver.Graph][]func() error{}}
}

func (s *simtExecutor) put(vs ...any) {
	for _, v := range vs {
		switch v := v.(type) {
		case []byte:
			s.in.Write(v)
		default:
			binary.Write(s.in, binary.LittleEndian, v)
		}
	}
}

// roundTrip sends the buffered command and reads the status.
func (s *simtExecutor) roundTrip() error {
	if err := s.in.Flush(); err != nil {
		return err
	}
	status, err := s.out.ReadByte()
	if err != nil {
		return fmt.Errorf("simt server: %w", err)
	}
	if status == 0 {
		return nil
	}
	var n uint32
	binary.Read(s.out, binary.LittleEndian, &n)
	msg := make([]byte, n)
	io.ReadFull(s.out, msg)
	return fmt.Errorf("simt server: %s", msg)
}

func (s *simtExecutor) do(fn func() error) error { return fn() }

func (s *simtExecutor) alloc(n int64) (driver.Ptr, error) {
	if s.capturing {
		return 0, errors.New("simt: alloc during capture")
	}
	s.put(byte('A'), uint64(n))
	if err := s.roundTrip(); err != nil {
		return 0, err
	}
	var p uint64
	err := binary.Read(s.out, binary.LittleEndian, &p)
	return driver.Ptr(p), err
}

func (s *simtExecutor) free(p driver.Ptr) error {
	s.put(byte('F'), uint64(p))
	return s.roundTrip()
}

func (s *simtExecutor) upload(dst driver.Ptr, src []byte) error {
	if s.capturing {
		return errors.New("simt: upload during capture")
	}
	s.put(byte('U'), uint64(dst), uint64(len(src)), src)
	return s.roundTrip()
}

func (s *simtExecutor) download(dst []byte, src driver.Ptr) error {
	s.put(byte('D'), uint64(src), uint64(len(dst)))
	if err := s.roundTrip(); err != nil {
		return err
	}
	_, err := io.ReadFull(s.out, dst)
	return err
}

func (s *simtExecutor) copyDevice(dst, src driver.Ptr, n int64) error {
	s.put(byte('C'), uint64(dst), uint64(src), uint64(n))
	return s.roundTrip()
}

func (s *simtExecutor) launch(id kernels.ID, g kernels.Geometry, args []arg) error {
	if err := checkArgs(id, args); err != nil {
		return err
	}
	run := func() error {
		s.launches++
		name := kernels.Table()[id].Name
		s.put(byte('L'), uint32(len(name)), []byte(name), g.Grid.X, g.Grid.Y, g.Grid.Z, g.Block.X, g.Block.Y, g.Block.Z, uint32(len(args)))
		for _, a := range args {
			s.put(a.bits)
		}
		return s.roundTrip()
	}
	if s.capturing {
		s.recorded = append(s.recorded, run)
		return nil
	}
	return run()
}

func (s *simtExecutor) hasGemm() bool { return false }

func (s *simtExecutor) gemm(int, int, int, cublas.Operand, cublas.Operand, driver.Ptr, int) error {
	return errors.New("simt: no cuBLAS")
}

func (s *simtExecutor) capture(fn func() error) (graph, error) {
	s.capturing, s.recorded = true, nil
	err := fn()
	s.capturing = false
	if err != nil {
		return graph{}, err
	}
	g := driver.Graph(len(s.graphs) + 1)
	s.graphs[g] = s.recorded
	return graph{g: g, exec: driver.GraphExec(g)}, nil
}

func (s *simtExecutor) replay(g graph) error {
	for _, run := range s.graphs[g.g] {
		if err := run(); err != nil {
			return err
		}
	}
	return nil
}

func (s *simtExecutor) destroy(g graph) error {
	delete(s.graphs, g.g)
	return nil
}

func (s *simtExecutor) sync() error { return nil }

// TestKernelSourcesOnCPU executes the kernel sources on CPU threads: every
// case of the GPU battery must match the emulator, and the whole Runner
// must match the CPU backend's forward pass, also through model.Decoder.
func TestKernelSourcesOnCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("the SIMT run takes a few seconds")
	}
	bin := buildSIMT(t)
	x := startSIMT(t, bin)
	checkKernelCases(t, x, "kernel sources")
	for _, tc := range []struct {
		preset string
		dt     model.DType
	}{{"tiny", model.F32}, {"tiny-qwen3", model.BF16}} {
		t.Run("runner-"+tc.preset+"-"+string(tc.dt), func(t *testing.T) {
			m := tinyModel(t, tc.preset, tc.dt)
			r, err := newRunner(x, m, RunnerOptions{MaxRows: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			prompt := []int{1, 5, 9, 200, 3, 77, 8, 4, 150, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
			checkParity(t, m, r, prompt, 3, 2e-4, 2e-4)
		})
	}
	t.Run("decoder", func(t *testing.T) {
		m := tinyModel(t, "tiny-qwen3", model.F32)
		if err := m.InitMTP(2, 3); err != nil {
			t.Fatal(err)
		}
		checkDecoder(t, x, m, 2e-4)
	})
}
