package cuda

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"testing"
	"unsafe"

	"github.com/livehat/livehat/model/cuda/internal/cublas"
	"github.com/livehat/livehat/model/cuda/internal/driver"
	"github.com/livehat/livehat/model/cuda/internal/kernels"
)

// emulator is an executor that runs on the CPU: device memory is a set of
// Go allocations at made-up addresses, and each kernel is a plain Go
// rendering of its .cu source's semantics, computed over exactly the part
// of the problem the launch geometry covers (so a geometry that misses
// rows shows up as wrong results). Every launch is checked against the
// kernel table, every pointer against the live allocations, and capture
// behaves as CUDA's does: launches are recorded, not run, and replayed on
// the memory as it is at replay time. It tests everything the Runner and
// Backend do on the host; the .cu sources themselves need a GPU.
type emulator struct {
	allocs   map[driver.Ptr][]byte
	next     driver.Ptr
	cublas   bool // pretend cuBLAS is loaded
	failNext error

	capturing bool
	recorded  []emuLaunch
	graphs    map[driver.Graph][]emuLaunch
	launches  map[string]int
	captures  int
	replays   int
	inDo      bool
}

type emuLaunch struct {
	id   kernels.ID
	g    kernels.Geometry
	args []arg
	gemm *emuGemm
}

type emuGemm struct {
	m, n, k int
	a, b    cublas.Operand
	c       driver.Ptr
	ldc     int
}

func newEmulator() *emulator {
	return &emulator{allocs: map[driver.Ptr][]byte{}, next: 0x7f0000000000, graphs: map[driver.Graph][]emuLaunch{}, launches: map[string]int{}}
}

func (e *emulator) do(fn func() error) error {
	if e.inDo {
		return errors.New("emulator: nested do")
	}
	e.inDo = true
	defer func() { e.inDo = false }()
	return fn()
}

func (e *emulator) guard(op string) error {
	if !e.inDo {
		return fmt.Errorf("emulator: %s outside do (no current context)", op)
	}
	if e.capturing {
		return fmt.Errorf("emulator: %s during stream capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)", op)
	}
	if e.failNext != nil {
		err := e.failNext
		e.failNext = nil
		return err
	}
	return nil
}

func (e *emulator) alloc(n int64) (driver.Ptr, error) {
	if err := e.guard("alloc"); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("emulator: alloc of %d bytes", n)
	}
	backing := make([]uint64, (n+7)/8)
	p := e.next
	e.allocs[p] = unsafe.Slice((*byte)(unsafe.Pointer(&backing[0])), n)
	e.next += driver.Ptr((n+4095)&^4095 + 4096) // a guard gap between allocations
	return p, nil
}

func (e *emulator) free(p driver.Ptr) error {
	if err := e.guard("free"); err != nil {
		return err
	}
	if _, ok := e.allocs[p]; !ok {
		return fmt.Errorf("emulator: free of %#x, not an allocation", p)
	}
	delete(e.allocs, p)
	return nil
}

// mem returns n bytes of device memory at p, which must lie inside one
// live allocation.
func (e *emulator) mem(p driver.Ptr, n int64) ([]byte, error) {
	for base, b := range e.allocs {
		if p >= base && p < base+driver.Ptr(len(b)) {
			off := int64(p - base)
			if off+n > int64(len(b)) {
				return nil, fmt.Errorf("emulator: %d bytes at %#x overrun the %d-byte allocation at %#x", n, p, len(b), base)
			}
			return b[off : off+n], nil
		}
	}
	return nil, fmt.Errorf("emulator: %#x is not device memory", p)
}

func (e *emulator) upload(dst driver.Ptr, src []byte) error {
	if err := e.guard("upload"); err != nil {
		return err
	}
	m, err := e.mem(dst, int64(len(src)))
	if err != nil {
		return err
	}
	copy(m, src)
	return nil
}

func (e *emulator) download(dst []byte, src driver.Ptr) error {
	if err := e.guard("download"); err != nil {
		return err
	}
	m, err := e.mem(src, int64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, m)
	return nil
}

func (e *emulator) copyDevice(dst, src driver.Ptr, n int64) error {
	if err := e.guard("copy"); err != nil {
		return err
	}
	d, err := e.mem(dst, n)
	if err != nil {
		return err
	}
	s, err := e.mem(src, n)
	if err != nil {
		return err
	}
	copy(d, s)
	return nil
}

func (e *emulator) sync() error { return e.guard("sync") }

func (e *emulator) hasGemm() bool { return e.cublas }

func (e *emulator) launch(id kernels.ID, g kernels.Geometry, args []arg) error {
	if !e.inDo {
		return errors.New("emulator: launch outside do")
	}
	if err := checkArgs(id, args); err != nil {
		return err
	}
	if g.Block.X*g.Block.Y*g.Block.Z > 1024 || g.Block.X == 0 || g.Grid.X == 0 {
		return fmt.Errorf("emulator: %s: invalid geometry %+v", kernels.Table()[id].Name, g)
	}
	l := emuLaunch{id: id, g: g, args: append([]arg(nil), args...)}
	if e.capturing {
		e.recorded = append(e.recorded, l)
		return nil
	}
	return e.run(l)
}

func (e *emulator) gemm(m, n, k int, a, b cublas.Operand, c driver.Ptr, ldc int) error {
	l := emuLaunch{gemm: &emuGemm{m, n, k, a, b, c, ldc}}
	if e.capturing {
		e.recorded = append(e.recorded, l)
		return nil
	}
	return e.run(l)
}

func (e *emulator) capture(fn func() error) (graph, error) {
	if e.capturing {
		return graph{}, errors.New("emulator: nested capture")
	}
	e.capturing, e.recorded = true, nil
	err := fn()
	e.capturing = false
	if err != nil {
		return graph{}, err
	}
	e.captures++
	g := driver.Graph(len(e.graphs) + 1)
	e.graphs[g] = e.recorded
	return graph{g: g, exec: driver.GraphExec(g)}, nil
}

func (e *emulator) replay(g graph) error {
	ls, ok := e.graphs[g.g]
	if !ok {
		return errors.New("emulator: replay of an unknown graph")
	}
	e.replays++
	for _, l := range ls {
		if err := e.run(l); err != nil {
			return err
		}
	}
	return nil
}

func (e *emulator) destroy(g graph) error {
	if _, ok := e.graphs[g.g]; !ok {
		return errors.New("emulator: destroy of an unknown graph")
	}
	delete(e.graphs, g.g)
	return nil
}

// liveBytes returns the device memory still allocated.
func (e *emulator) liveBytes() int {
	n := 0
	for _, b := range e.allocs {
		n += len(b)
	}
	return n
}

// Typed views of device memory.

func (e *emulator) f32(p driver.Ptr, n int) []float32 {
	b, err := e.mem(p, 4*int64(n))
	if err != nil {
		panic(err)
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

func (e *emulator) u16(p driver.Ptr, n int) []uint16 {
	b, err := e.mem(p, 2*int64(n))
	if err != nil {
		panic(err)
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
}

func (e *emulator) i32(p driver.Ptr, n int) []int32 {
	b, err := e.mem(p, 4*int64(n))
	if err != nil {
		panic(err)
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), n)
}

func (e *emulator) u64(p driver.Ptr, n int) []uint64 {
	b, err := e.mem(p, 8*int64(n))
	if err != nil {
		panic(err)
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n)
}

func bf16f(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// toBF16 rounds as common.cuh's f32_to_bf16 does.
func toBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// run executes one launch. Memory errors (a pointer outside every
// allocation) panic inside the views and are turned into errors here.
func (e *emulator) run(l emuLaunch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			name := "cublasGemmEx"
			if l.gemm == nil {
				name = kernels.Table()[l.id].Name
			}
			err = fmt.Errorf("emulator: %s: %v", name, r)
		}
	}()
	if l.gemm != nil {
		e.launches["cublasGemmEx"]++
		e.runGemm(l.gemm)
		return nil
	}
	e.launches[kernels.Table()[l.id].Name]++
	a := l.args
	P := func(i int) driver.Ptr { return driver.Ptr(a[i].bits) }
	I := func(i int) int { return int(int32(uint32(a[i].bits))) }
	L := func(i int) int { return int(int64(a[i].bits)) }
	F := func(i int) float32 { return math.Float32frombits(uint32(a[i].bits)) }
	gx, gy := int(l.g.Grid.X), int(l.g.Grid.Y)
	switch l.id {
	case kernels.EmbedF32, kernels.EmbedBF16:
		dim := I(3)
		tokens := e.i32(P(2), gx)
		out := e.f32(P(0), gx*dim)
		for r := range gx {
			for i := range dim {
				if l.id == kernels.EmbedF32 {
					out[r*dim+i] = e.f32(P(1).Add(4*(int64(tokens[r])*int64(dim)+int64(i))), 1)[0]
				} else {
					out[r*dim+i] = bf16f(e.u16(P(1).Add(2*(int64(tokens[r])*int64(dim)+int64(i))), 1)[0])
				}
			}
		}
	case kernels.RMSNorm:
		dim, eps := I(3), F(4)
		x, out, w := e.f32(P(1), gx*dim), e.f32(P(0), gx*dim), e.f32(P(2), dim)
		for r := range gx {
			var ss float64
			for _, v := range x[r*dim : (r+1)*dim] {
				ss += float64(v) * float64(v)
			}
			inv := float32(1 / math.Sqrt(ss/float64(dim)+float64(eps)))
			for i := range dim {
				out[r*dim+i] = w[i] * (x[r*dim+i] * inv)
			}
		}
	case kernels.RoPE:
		heads, dim, theta := I(2), I(3), math.Float64frombits(a[4].bits)
		x, pos := e.f32(P(0), gx*heads*dim), e.i32(P(1), gx)
		half := dim / 2
		for r := range gx {
			for h := range gy {
				v := x[(r*heads+h)*dim : (r*heads+h+1)*dim]
				for i := range half {
					inv := 1 / float32(math.Pow(theta, float64(float32(2*i)/float32(dim))))
					s, c := math.Sincos(float64(float32(pos[r]) * inv))
					cs, sn := float32(c), float32(s)
					x0, x1 := v[i], v[i+half]
					v[i] = x0*cs - x1*sn
					v[i+half] = x1*cs + x0*sn
				}
			}
		}
	case kernels.KVStore:
		layer, kvDim := I(6), I(7)
		k, v := e.f32(P(0), gx*kvDim), e.f32(P(1), gx*kvDim)
		pos, kc, vc, stride := e.i32(P(2), gx), e.u64(P(3), gx), e.u64(P(4), gx), e.u64(P(5), gx)
		for r := range gx {
			off := 4 * (int64(layer)*int64(stride[r]) + int64(pos[r])*int64(kvDim))
			copy(e.f32(driver.Ptr(kc[r]).Add(off), kvDim), k[r*kvDim:(r+1)*kvDim])
			copy(e.f32(driver.Ptr(vc[r]).Add(off), kvDim), v[r*kvDim:(r+1)*kvDim])
		}
	case kernels.Attention:
		layer, heads, kvHeads, d, scale := I(6), I(7), I(8), I(9), F(10)
		rows := gy
		out, q := e.f32(P(0), rows*heads*d), e.f32(P(1), rows*heads*d)
		pos, kc, vc, stride := e.i32(P(2), rows), e.u64(P(3), rows), e.u64(P(4), rows), e.u64(P(5), rows)
		kvDim := kvHeads * d
		for r := range rows {
			n := int(pos[r]) + 1
			base := 4 * int64(layer) * int64(stride[r])
			keys := e.f32(driver.Ptr(kc[r]).Add(base), n*kvDim)
			vals := e.f32(driver.Ptr(vc[r]).Add(base), n*kvDim)
			for h := range gx {
				kvh := h / (heads / kvHeads)
				qh := q[(r*heads+h)*d : (r*heads+h+1)*d]
				scores := make([]float32, n)
				mx := float32(math.Inf(-1))
				for j := range n {
					var s float32
					for t := range d {
						s += qh[t] * keys[j*kvDim+kvh*d+t]
					}
					scores[j] = s * scale
					mx = max(mx, scores[j])
				}
				var sum float32
				for j := range scores {
					scores[j] = float32(math.Exp(float64(scores[j] - mx)))
					sum += scores[j]
				}
				o := out[(r*heads+h)*d : (r*heads+h+1)*d]
				for t := range d {
					var acc float32
					for j := range n {
						acc += scores[j] * vals[j*kvDim+kvh*d+t]
					}
					o[t] = acc / sum
				}
			}
		}
	case kernels.AttentionPartial:
		layer, heads, kvHeads, d, scale := I(6), I(7), I(8), I(9), F(10)
		rows, splits := gy, int(l.g.Grid.Z)
		q := e.f32(P(1), rows*heads*d)
		part := e.f32(P(0), rows*heads*splits*(d+2))
		pos, kc, vc, stride := e.i32(P(2), rows), e.u64(P(3), rows), e.u64(P(4), rows), e.u64(P(5), rows)
		kvDim := kvHeads * d
		for r := range rows {
			n := int(pos[r]) + 1
			share := (n + splits - 1) / splits
			base := 4 * int64(layer) * int64(stride[r])
			keys := e.f32(driver.Ptr(kc[r]).Add(base), n*kvDim)
			vals := e.f32(driver.Ptr(vc[r]).Add(base), n*kvDim)
			for h := range gx {
				kvh := h / (heads / kvHeads)
				qh := q[(r*heads+h)*d : (r*heads+h+1)*d]
				for sp := range splits {
					j0, j1 := sp*share, min(n, sp*share+share)
					out := part[((r*heads+h)*splits+sp)*(d+2) : ((r*heads+h)*splits+sp+1)*(d+2)]
					mx := float32(math.Inf(-1))
					scores := make([]float32, max(j1-j0, 0))
					for j := j0; j < j1; j++ {
						var sc float32
						for t := range d {
							sc += qh[t] * keys[j*kvDim+kvh*d+t]
						}
						scores[j-j0] = sc * scale
						mx = max(mx, scores[j-j0])
					}
					clear(out)
					out[0] = mx
					for j := j0; j < j1; j++ {
						p := float32(math.Exp(float64(scores[j-j0] - mx)))
						out[1] += p
						for t := range d {
							out[2+t] += p * vals[j*kvDim+kvh*d+t]
						}
					}
				}
			}
		}
	case kernels.AttentionCombine:
		heads, d, splits := I(2), I(3), I(4)
		rows := gy
		out, part := e.f32(P(0), rows*heads*d), e.f32(P(1), rows*heads*splits*(d+2))
		for r := range rows {
			for h := range gx {
				p := part[(r*heads+h)*splits*(d+2):]
				mx := float32(math.Inf(-1))
				for sp := range splits {
					mx = max(mx, p[sp*(d+2)])
				}
				var total float32
				for sp := range splits {
					total += p[sp*(d+2)+1] * float32(math.Exp(float64(p[sp*(d+2)]-mx)))
				}
				for t := range d {
					var v float32
					for sp := range splits {
						v += p[sp*(d+2)+2+t] * float32(math.Exp(float64(p[sp*(d+2)]-mx)))
					}
					out[(r*heads+h)*d+t] = v / total
				}
			}
		}
	case kernels.AddBias:
		n, dim := L(2), I(3)
		x, b := e.f32(P(0), n), e.f32(P(1), dim)
		for i := range x {
			x[i] += b[i%dim]
		}
	case kernels.ResidualAdd:
		dst, src := e.f32(P(0), L(2)), e.f32(P(1), L(2))
		for i := range dst {
			dst[i] += src[i]
		}
	case kernels.SwiGLU:
		g, u := e.f32(P(0), L(2)), e.f32(P(1), L(2))
		for i, v := range g {
			g[i] = v / (1 + float32(math.Exp(float64(-v)))) * u[i]
		}
	case kernels.GatherRows:
		dim := I(3)
		rows := e.i32(P(2), gx)
		dst := e.f32(P(0), gx*dim)
		for r := range gx {
			copy(dst[r*dim:(r+1)*dim], e.f32(P(1).Add(4*int64(rows[r])*int64(dim)), dim))
		}
	case kernels.ToBF16:
		dst, src := e.u16(P(0), L(2)), e.f32(P(1), L(2))
		for i, v := range src {
			dst[i] = toBF16(v)
		}
	case kernels.LinearSmallF32, kernels.LinearSmallBF16, kernels.LinearTiledF32, kernels.LinearTiledBF16:
		n, rows, cols := I(3), I(4), I(5)
		// The rows and outputs the geometry reaches, as the kernels index.
		nMax, rMax := n, gx*int(l.g.Block.X/32)
		if l.id == kernels.LinearTiledF32 || l.id == kernels.LinearTiledBF16 {
			nMax, rMax = gy*kernels.Tile, gx*kernels.Tile
		} else if n > kernels.LinearSmallMaxN {
			return fmt.Errorf("emulator: linear_small with n = %d", n)
		}
		y, x := e.f32(P(0), n*rows), e.f32(P(1), n*cols)
		bf := l.id == kernels.LinearSmallBF16 || l.id == kernels.LinearTiledBF16
		var wf []float32
		var wh []uint16
		if bf {
			wh = e.u16(P(2), rows*cols)
		} else {
			wf = e.f32(P(2), rows*cols)
		}
		for b := range min(n, nMax) {
			for r := range min(rows, rMax) {
				var s float32
				for c := range cols {
					w := float32(0)
					if bf {
						w = bf16f(wh[r*cols+c])
					} else {
						w = wf[r*cols+c]
					}
					s += x[b*cols+c] * w
				}
				y[b*rows+r] = s
			}
		}
	case kernels.Sgemm:
		ta, tb, m, n, k, alpha := I(0) != 0, I(1) != 0, I(2), I(3), I(4), F(5)
		lda, ldb, beta, ldc := I(7), I(9), F(10), I(12)
		if gx*16 < n || gy*16 < m {
			return fmt.Errorf("emulator: sgemm grid %v does not cover %d×%d", l.g.Grid, m, n)
		}
		extent := func(rows, cols, ld int) int { return max((rows-1)*ld+cols, 0) }
		ar, ac, br, bc := m, k, k, n
		if ta {
			ar, ac = k, m
		}
		if tb {
			br, bc = n, k
		}
		am, bm := e.f32(P(6), extent(ar, ac, lda)), e.f32(P(8), extent(br, bc, ldb))
		cm := e.f32(P(11), extent(m, n, ldc))
		for i := range m {
			for j := range n {
				var s float32
				for p := range k {
					ai, bi := i*lda+p, p*ldb+j
					if ta {
						ai = p*lda + i
					}
					if tb {
						bi = j*ldb + p
					}
					av, bv := am[ai], bm[bi]
					s += av * bv
				}
				if beta == 0 {
					cm[i*ldc+j] = alpha * s
				} else {
					cm[i*ldc+j] = alpha*s + beta*cm[i*ldc+j]
				}
			}
		}
	case kernels.Argmax, kernels.SampleGumbel:
		vocab := I(2)
		out, logits := e.i32(P(0), gx), e.f32(P(1), gx*vocab)
		for r := range gx {
			row := logits[r*vocab : (r+1)*vocab]
			best, bi := float32(math.Inf(-1)), 0
			var base uint64
			if l.id == kernels.SampleGumbel {
				base = splitmix64(a[4].bits ^ splitmix64(e.u64(P(5), gx)[r]))
			}
			for i, v := range row {
				if l.id == kernels.SampleGumbel {
					h := splitmix64(base + uint64(i))
					u := (float32(h>>40) + 0.5) * (1.0 / 16777216.0)
					v = v*F(3) - float32(math.Log(-math.Log(float64(u))))
				}
				if v > best {
					best, bi = v, i
				}
			}
			out[r] = int32(bi)
		}
	default:
		return fmt.Errorf("emulator: no emulation of kernel %d", l.id)
	}
	return nil
}

func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// runGemm emulates cuBLAS through the row-major mapping the Runner uses.
func (e *emulator) runGemm(g *emuGemm) {
	// operand returns op(X) as a dense rows×cols float32 matrix.
	operand := func(o cublas.Operand, rows, cols int) []float32 {
		sr, sc := rows, cols // stored shape
		if o.Trans {
			sr, sc = cols, rows
		}
		n := (sr-1)*o.LD + sc
		stored := make([]float32, n)
		if o.Type == cublas.R16BF {
			for i, h := range e.u16(driver.Ptr(o.Ptr), n) {
				stored[i] = bf16f(h)
			}
		} else {
			copy(stored, e.f32(driver.Ptr(o.Ptr), n))
		}
		out := make([]float32, rows*cols)
		for i := range rows {
			for j := range cols {
				if o.Trans {
					out[i*cols+j] = stored[j*o.LD+i]
				} else {
					out[i*cols+j] = stored[i*o.LD+j]
				}
			}
		}
		return out
	}
	a, b := operand(g.a, g.m, g.k), operand(g.b, g.k, g.n)
	c := e.f32(g.c, (g.m-1)*g.ldc+g.n)
	for i := range g.m {
		for j := range g.n {
			var s float32
			for p := range g.k {
				s += a[i*g.k+p] * b[p*g.n+j]
			}
			c[i*g.ldc+j] = s
		}
	}
}

// launchCounts returns "name×count" strings, sorted, for messages.
func (e *emulator) launchCounts() []string {
	var out []string
	for n, c := range e.launches {
		out = append(out, fmt.Sprintf("%s×%d", n, c))
	}
	sort.Strings(out)
	return out
}

// TestKernelCasesOnEmulator runs the GPU kernel battery on the emulator,
// so the battery itself (shapes, arguments, pointer tables) is known to be
// sound before a GPU machine runs it against the real kernels.
func TestKernelCasesOnEmulator(t *testing.T) {
	for _, c := range kernelCases() {
		out, err := runCase(newEmulator(), c)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for name := range c.outputs {
			nonzero := false
			for _, b := range out[name] {
				nonzero = nonzero || b != 0
			}
			if !nonzero {
				t.Errorf("%s: output %s is all zero", c.name, name)
			}
		}
	}
}
