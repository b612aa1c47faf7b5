package kernels

import (
	"fmt"

	"github.com/livehat/livehat/model/cuda/internal/driver"
)

// Constants shared with the sources (the #defines of the same names).
const (
	// AttentionWarps is ATT_WARPS in attention.cu.
	AttentionWarps = 4
	// MaxHeadDim is ATT_MAX_HEAD_DIM in attention.cu.
	MaxHeadDim = 256
	// LinearSmallMaxN is LINEAR_SMALL_MAX_N in gemm.cu: steps with at most
	// this many rows use the warp-per-output kernel.
	LinearSmallMaxN = 8
	// Tile and TileThreads are TILE in gemm.cu and the block the tiled
	// kernel assumes (16×16 threads, 4×4 outputs each).
	Tile        = 64
	TileThreads = 256
	// SampleThreads is SAMPLE_THREADS in sample.cu.
	SampleThreads = 1024
	// maxGridYZ is the hardware limit on gridDim.y and gridDim.z.
	maxGridYZ = 65535
	// maxGridX is the hardware limit on gridDim.x (sm_30 and newer).
	maxGridX = 1<<31 - 1
	// elementwiseBlock and maxElementwiseGrid shape the grid-stride loops.
	elementwiseBlock   = 256
	maxElementwiseGrid = 65535
)

// Geometry is one launch's grid and block.
type Geometry struct {
	Grid, Block driver.Dim3
}

// Threads returns the number of threads launched.
func (g Geometry) Threads() int64 {
	return int64(g.Grid.X) * int64(g.Grid.Y) * int64(g.Grid.Z) * int64(g.Block.X) * int64(g.Block.Y) * int64(g.Block.Z)
}

func dim(x, y, z int) driver.Dim3 { return driver.Dim3{X: uint32(x), Y: uint32(y), Z: uint32(z)} }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// warps returns n rounded up to whole warps, clamped to [32, limit].
func warps(n, limit int) int {
	return min(max(ceilDiv(n, 32)*32, 32), limit)
}

func check(name string, g Geometry, dims ...int) (Geometry, error) {
	for _, d := range dims {
		if d <= 0 {
			return Geometry{}, fmt.Errorf("kernels: %s launch over an empty shape %v", name, dims)
		}
	}
	if g.Grid.X > maxGridX || g.Grid.Y > maxGridYZ || g.Grid.Z > maxGridYZ {
		return Geometry{}, fmt.Errorf("kernels: %s grid %v exceeds the device limits (shape %v)", name, g.Grid, dims)
	}
	return g, nil
}

// PerRow is the geometry of the one-block-per-row kernels (embed_*,
// gather_rows, kv_store): rows blocks of up to 256 threads striding over
// width.
func PerRow(rows, width int) (Geometry, error) {
	return check("per-row", Geometry{dim(rows, 1, 1), dim(warps(width, 256), 1, 1)}, rows, width)
}

// Norm is rms_norm's geometry: one block per row of width dim.
func Norm(rows, width int) (Geometry, error) {
	return check("rms_norm", Geometry{dim(rows, 1, 1), dim(warps(width, 512), 1, 1)}, rows, width)
}

// Rope is rope's geometry: a block per (row, head), a thread per rotated
// pair.
func Rope(rows, heads, headDim int) (Geometry, error) {
	if headDim%2 != 0 {
		return Geometry{}, fmt.Errorf("kernels: rope over an odd head width %d", headDim)
	}
	return check("rope", Geometry{dim(rows, heads, 1), dim(warps(headDim/2, 128), 1, 1)}, rows, heads, headDim)
}

// AttentionLaunch is attention's geometry: a block of AttentionWarps warps
// per (query head, row).
func AttentionLaunch(rows, heads, kvHeads, headDim int) (Geometry, error) {
	switch {
	case headDim > MaxHeadDim:
		return Geometry{}, fmt.Errorf("kernels: attention supports head widths up to %d, not %d", MaxHeadDim, headDim)
	case kvHeads <= 0 || heads%kvHeads != 0:
		return Geometry{}, fmt.Errorf("kernels: %d query heads do not group over %d KV heads", heads, kvHeads)
	}
	return check("attention", Geometry{dim(heads, rows, 1), dim(32*AttentionWarps, 1, 1)}, rows, heads, headDim)
}

// AttentionSplits is how many blocks share each (head, row) of a decode
// pass's attention: enough that a batch-1 step over a long context fills
// an H200's 132 SMs several times with a few heads.
const AttentionSplits = 16

// AttentionPartialLaunch is attention_partial's geometry: splits blocks
// per (query head, row).
func AttentionPartialLaunch(rows, heads, kvHeads, headDim, splits int) (Geometry, error) {
	g, err := AttentionLaunch(rows, heads, kvHeads, headDim)
	if err != nil {
		return Geometry{}, err
	}
	g.Grid.Z = uint32(splits)
	return check("attention_partial", g, rows, heads, headDim, splits)
}

// AttentionCombineLaunch is attention_combine's geometry: a block per
// (query head, row), a thread per output element.
func AttentionCombineLaunch(rows, heads, headDim int) (Geometry, error) {
	return check("attention_combine", Geometry{dim(heads, rows, 1), dim(warps(headDim, MaxHeadDim), 1, 1)}, rows, heads, headDim)
}

// Elementwise is the geometry of the grid-stride kernels over n elements.
func Elementwise(n int64) (Geometry, error) {
	if n <= 0 {
		return Geometry{}, fmt.Errorf("kernels: element-wise launch over %d elements", n)
	}
	blocks := min((n+elementwiseBlock-1)/elementwiseBlock, maxElementwiseGrid)
	return Geometry{dim(int(blocks), 1, 1), dim(elementwiseBlock, 1, 1)}, nil
}

// Linear picks the kernel and geometry of y = x·Wᵀ for n rows of x against
// a rows×cols weight: the warp-per-output kernel for decode-sized n, the
// tiled kernel otherwise.
func Linear(n, rows, cols int, bf16 bool) (ID, Geometry, error) {
	small, tiled := LinearSmallF32, LinearTiledF32
	if bf16 {
		small, tiled = LinearSmallBF16, LinearTiledBF16
	}
	if n <= LinearSmallMaxN {
		const warpsPerBlock = 8
		g, err := check("linear_small", Geometry{dim(ceilDiv(rows, warpsPerBlock), 1, 1), dim(32*warpsPerBlock, 1, 1)}, n, rows, cols)
		return small, g, err
	}
	g, err := check("linear_tiled", Geometry{dim(ceilDiv(rows, Tile), ceilDiv(n, Tile), 1), dim(TileThreads, 1, 1)}, n, rows, cols)
	return tiled, g, err
}

// SgemmLaunch is sgemm's geometry for an m×n result: 16×16 tiles.
func SgemmLaunch(m, n, k int) (Geometry, error) {
	return check("sgemm", Geometry{dim(ceilDiv(n, 16), ceilDiv(m, 16), 1), dim(16, 16, 1)}, m, n, k)
}

// Sample is the geometry of argmax and sample_gumbel: a block per row.
func Sample(rows, vocab int) (Geometry, error) {
	return check("sample", Geometry{dim(rows, 1, 1), dim(SampleThreads, 1, 1)}, rows, vocab)
}
