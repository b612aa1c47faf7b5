package kernels

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// entryPoints parses a .cu source for its extern "C" __global__ kernels and
// their parameter types.
func entryPoints(t *testing.T, src string) map[string][]Param {
	t.Helper()
	re := regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)
	out := map[string][]Param{}
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		var params []Param
		for _, p := range strings.Split(m[2], ",") {
			p = strings.Join(strings.Fields(p), " ")
			typ := p[:strings.LastIndex(p, " ")]
			switch {
			case strings.Contains(typ, "*"):
				params = append(params, Ptr)
			case typ == "int":
				params = append(params, I32)
			case typ == "long long":
				params = append(params, I64)
			case typ == "unsigned long long":
				params = append(params, U64)
			case typ == "float":
				params = append(params, F32)
			case typ == "double":
				params = append(params, F64)
			default:
				t.Errorf("kernel %s: parameter %q has a type the launcher cannot pack", m[1], p)
			}
		}
		out[m[1]] = params
	}
	return out
}

// TestSourcesDefineTheTable checks that every kernel the Go side launches
// is an extern "C" __global__ entry point of its file with exactly the
// parameter types the table (and so every launch) passes, and that no
// file defines an entry point the table lacks.
func TestSourcesDefineTheTable(t *testing.T) {
	table := Table()
	if len(table) != int(NumKernels) {
		t.Fatalf("table has %d kernels, NumKernels is %d", len(table), NumKernels)
	}
	byFile := map[string]map[string][]Param{}
	for _, f := range Files() {
		src, err := RawSource(f)
		if err != nil {
			t.Fatal(err)
		}
		byFile[f] = entryPoints(t, src)
	}
	listed := map[string]bool{}
	for id, s := range table {
		got, ok := byFile[s.File][s.Name]
		if !ok {
			t.Errorf("kernel %d: %s does not define extern \"C\" __global__ %s", id, s.File, s.Name)
			continue
		}
		if !slices.Equal(got, s.Params) {
			t.Errorf("%s: source parameters %v, table %v", s.Name, got, s.Params)
		}
		listed[s.File+":"+s.Name] = true
	}
	for f, eps := range byFile {
		for name := range eps {
			if !listed[f+":"+name] {
				t.Errorf("%s defines %s, which the table does not list", f, name)
			}
		}
	}
}

func TestSourceAssembly(t *testing.T) {
	src, hash, err := Source("norm.cu")
	if err != nil {
		t.Fatal(err)
	}
	common, _ := RawSource("common.cuh")
	if !strings.HasPrefix(src, common) || !strings.Contains(src, "\n#line 1 \"norm.cu\"\n") {
		t.Error("module source is not common.cuh + #line + file")
	}
	if len(hash) != 64 {
		t.Errorf("hash %q", hash)
	}
	_, hash2, _ := Source("rope.cu")
	if hash == hash2 {
		t.Error("different files hash alike")
	}
	if Assemble("a", "f.cu", "b") != "a\n#line 1 \"f.cu\"\nb" {
		t.Error("Assemble does not end the prelude with a newline")
	}
	if _, _, err := Source("missing.cu"); err == nil {
		t.Error("Source of a missing file succeeded")
	}
	for _, f := range Files() {
		s, _ := RawSource(f)
		if strings.Contains(s, "#include") {
			t.Errorf("%s includes a header; NVRTC has none", f)
		}
	}
}

// TestGeneratedPTX checks any committed PTX: it must have been made from
// the current source, else it is silently ignored at run time and the
// commit is dead weight.
func TestGeneratedPTX(t *testing.T) {
	found := 0
	for _, f := range Files() {
		_, hash, _ := Source(f)
		b, err := files.ReadFile(PTXName(f))
		if err != nil {
			continue
		}
		found++
		if _, _, ok := GeneratedPTX(f, hash); !ok {
			t.Errorf("%s is stale: regenerate with go generate", PTXName(f))
		}
		if !strings.Contains(string(b), ".target ") {
			t.Errorf("%s is not PTX", PTXName(f))
		}
	}
	if found == 0 {
		t.Skip("no generated PTX embedded (no nvcc where the code was built); the backend compiles with NVRTC")
	}
}

func TestPTXHelpers(t *testing.T) {
	ptx := []byte(PTXHeader + "abc\n.version 8.4\n.target sm_90, debug\n.address_size 64\n")
	if PTXTarget(ptx) != "sm_90" || PTXTarget([]byte("nothing")) != "" {
		t.Error("PTXTarget")
	}
	if PTXName("gemm.cu") != "ptx/gemm.ptx" {
		t.Error("PTXName")
	}
	if _, _, ok := GeneratedPTX("gemm.cu", "0000"); ok {
		t.Error("stale hash accepted")
	}
}

func TestGeometry(t *testing.T) {
	for _, s := range []struct{ rows, width int }{{1, 64}, {7, 896}, {512, 4864}, {3, 1}, {1, 151936}} {
		g, err := PerRow(s.rows, s.width)
		if err != nil {
			t.Fatal(err)
		}
		if int(g.Grid.X) != s.rows || g.Block.X%32 != 0 || g.Block.X > 256 {
			t.Errorf("PerRow%v = %+v", s, g)
		}
		g, err = Norm(s.rows, s.width)
		if err != nil || int(g.Grid.X) != s.rows || g.Block.X%32 != 0 || g.Block.X > 512 || g.Block.X > uint32(max(32, s.width+31)) {
			t.Errorf("Norm%v = %+v, %v", s, g, err)
		}
	}
	for _, s := range []struct{ rows, heads, d int }{{1, 14, 64}, {128, 16, 128}, {5, 4, 16}, {2, 2, 256}} {
		g, err := Rope(s.rows, s.heads, s.d)
		if err != nil || int(g.Grid.X) != s.rows || int(g.Grid.Y) != s.heads || g.Block.X%32 != 0 {
			t.Errorf("Rope%v = %+v, %v", s, g, err)
		}
		if int(g.Block.X) < min(s.d/2, 128) {
			t.Errorf("Rope%v: %d threads for %d pairs leaves the stride loop more work than needed", s, g.Block.X, s.d/2)
		}
		g, err = AttentionLaunch(s.rows, s.heads, 2, s.d)
		if err != nil || int(g.Grid.X) != s.heads || int(g.Grid.Y) != s.rows || g.Block.X != 32*AttentionWarps {
			t.Errorf("Attention%v = %+v, %v", s, g, err)
		}
	}
	for _, s := range []struct{ rows, heads, d, splits int }{{1, 14, 64, AttentionSplits}, {8, 16, 128, AttentionSplits}, {3, 4, 48, 5}} {
		g, err := AttentionPartialLaunch(s.rows, s.heads, 2, s.d, s.splits)
		if err != nil || int(g.Grid.X) != s.heads || int(g.Grid.Y) != s.rows || int(g.Grid.Z) != s.splits || g.Block.X != 32*AttentionWarps {
			t.Errorf("AttentionPartial%v = %+v, %v", s, g, err)
		}
		g, err = AttentionCombineLaunch(s.rows, s.heads, s.d)
		if err != nil || int(g.Grid.X) != s.heads || int(g.Grid.Y) != s.rows || int(g.Block.X) < min(s.d, MaxHeadDim) || g.Block.X%32 != 0 {
			t.Errorf("AttentionCombine%v = %+v, %v", s, g, err)
		}
	}
	if _, err := AttentionPartialLaunch(1, 4, 2, 64, 0); err == nil {
		t.Error("zero splits accepted")
	}
	if _, err := Rope(1, 1, 7); err == nil {
		t.Error("odd head width accepted")
	}
	if _, err := AttentionLaunch(1, 4, 2, 512); err == nil {
		t.Error("head width above the kernel's limit accepted")
	}
	if _, err := AttentionLaunch(1, 6, 4, 64); err == nil {
		t.Error("heads not divisible by KV heads accepted")
	}
	if _, err := AttentionLaunch(70000, 4, 2, 64); err == nil {
		t.Error("grid.y over 65535 accepted")
	}
	if _, err := PerRow(0, 8); err == nil {
		t.Error("empty launch accepted")
	}

	for _, n := range []int64{1, 255, 256, 257, 1 << 20, 1 << 34} {
		g, err := Elementwise(n)
		if err != nil {
			t.Fatal(err)
		}
		// Grid-stride loops cover any n; the grid must not exceed what
		// n needs nor the cap.
		if need := (n + 255) / 256; int64(g.Grid.X) != min(need, maxElementwiseGrid) {
			t.Errorf("Elementwise(%d) grid %d", n, g.Grid.X)
		}
	}
	if _, err := Elementwise(0); err == nil {
		t.Error("empty element-wise launch accepted")
	}

	for _, s := range []struct {
		n, rows, cols int
		bf16          bool
	}{{1, 896, 896, false}, {8, 4864, 896, true}, {9, 128, 896, false}, {512, 151936, 896, true}, {3, 5, 7, true}, {65, 65, 3, false}} {
		id, g, err := Linear(s.n, s.rows, s.cols, s.bf16)
		if err != nil {
			t.Fatal(err)
		}
		spec := Table()[id]
		if s.bf16 != strings.HasSuffix(spec.Name, "bf16") {
			t.Errorf("Linear%v picked %s", s, spec.Name)
		}
		if s.n <= LinearSmallMaxN {
			// One warp per output row.
			if !strings.HasPrefix(spec.Name, "linear_small") || int64(g.Grid.X)*int64(g.Block.X/32) < int64(s.rows) {
				t.Errorf("Linear%v = %s %+v does not cover the rows", s, spec.Name, g)
			}
			continue
		}
		// One 64×64 tile per block, over (output features, input rows).
		if !strings.HasPrefix(spec.Name, "linear_tiled") || g.Block.X != TileThreads ||
			int(g.Grid.X)*Tile < s.rows || int(g.Grid.Y)*Tile < s.n ||
			int(g.Grid.X-1)*Tile >= s.rows || int(g.Grid.Y-1)*Tile >= s.n {
			t.Errorf("Linear%v = %s %+v", s, spec.Name, g)
		}
	}
	g, err := SgemmLaunch(33, 17, 5)
	if err != nil || g.Grid.X != 2 || g.Grid.Y != 3 || g.Block.X != 16 || g.Block.Y != 16 {
		t.Errorf("Sgemm = %+v, %v", g, err)
	}
	g, err = Sample(4, 151936)
	if err != nil || g.Grid.X != 4 || g.Block.X != SampleThreads || g.Threads() != 4*SampleThreads {
		t.Errorf("Sample = %+v, %v", g, err)
	}
}

// TestConstantsMatchSources checks the #defines the geometry relies on.
func TestConstantsMatchSources(t *testing.T) {
	for file, want := range map[string][]string{
		"attention.cu": {fmt.Sprintf("#define ATT_WARPS %d", AttentionWarps), fmt.Sprintf("#define ATT_MAX_HEAD_DIM %d", MaxHeadDim)},
		"gemm.cu":      {fmt.Sprintf("#define LINEAR_SMALL_MAX_N %d", LinearSmallMaxN), fmt.Sprintf("#define TILE %d", Tile)},
		"sample.cu":    {fmt.Sprintf("#define SAMPLE_THREADS %d", SampleThreads)},
	} {
		src, err := RawSource(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(src, w+"\n") {
				t.Errorf("%s lacks %q", file, w)
			}
		}
	}
	// The tiled kernel maps tid&15, tid>>4 onto a 16×16 grid of 4×4
	// sub-tiles, which is TILE = 64 with 256 threads.
	if TileThreads != (Tile/4)*(Tile/4) {
		t.Error("TileThreads does not match TILE")
	}
}

// FuzzPTXTarget feeds arbitrary text to the PTX parsers: no panics, and a
// target is one token taken from a .target line.
func FuzzPTXTarget(f *testing.F) {
	f.Add([]byte(".version 8.4\n.target sm_90\n"))
	f.Add([]byte(".target sm_80, texmode_independent\n"))
	f.Add([]byte(".target \n"))
	f.Add([]byte(PTXHeader + "x\n.target"))
	f.Fuzz(func(t *testing.T, b []byte) {
		target := PTXTarget(b)
		if strings.ContainsAny(target, ", \n") {
			t.Errorf("target %q is not one token", target)
		}
		if target != "" && !strings.Contains(string(b), ".target ") {
			t.Errorf("target %q from text without a .target line", target)
		}
		if _, _, ok := GeneratedPTX(string(b), "0"); ok {
			t.Errorf("arbitrary file name %q matched generated PTX", b)
		}
	})
}
