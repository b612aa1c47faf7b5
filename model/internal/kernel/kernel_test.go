package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Error bounds. Every kernel sums k products in float32 in some order (with
// or without FMA), so by the standard bound its error against the exact
// result is at most γ·Σ|terms| with γ = (k+c)·u, u = 2⁻²⁴ the unit roundoff
// and c a few extra roundings (alpha, beta, block scales). The tests use
// γ = (k+4)·2⁻²³, twice that, and compute references in float64.
func bound(k int, absSum float64) float64 {
	return float64(k+4) * math.Ldexp(1, -23) * absSum
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// refGemm returns alpha·op(A)·op(B) + beta·C in float64 and, per element,
// the sum of magnitudes that bounds its rounding error.
func refGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (want, mag []float64) {
	want = make([]float64, m*n)
	mag = make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, sa float64
			for p := range k {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
				sa += math.Abs(float64(av) * float64(bv))
			}
			w := float64(alpha) * s
			mg := math.Abs(float64(alpha)) * sa
			if beta != 0 {
				w += float64(beta) * float64(c[i*ldc+j])
				mg += math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			want[i*n+j], mag[i*n+j] = w, mg
		}
	}
	return want, mag
}

var testShapes = []int{1, 5, 17, 63, 257}

func TestSgemm(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	type ab struct{ alpha, beta float32 }
	scalars := []ab{{1, 0}, {0.5, 1}, {-1.5, 0.25}}
	count := 0
	shapes := testShapes
	if raceEnabled {
		shapes = testShapes[:3]
	}
	for _, m := range shapes {
		for _, n := range shapes {
			for _, k := range shapes {
				count++
				transA, transB := count%2 == 1, count%3 == 1
				sc := scalars[count%len(scalars)]
				checkSgemm(t, pool, rng, transA, transB, m, n, k, sc.alpha, sc.beta, 3)
			}
		}
	}
	// Shapes that cross every blocking boundary and the thread split, all
	// four transposes, and the small-m path (transB, m ≤ smallM).
	big := [][3]int{{300, 4100, 20}, {150, 33, 600}, {1, 3000, 70}, {16, 100, 300}, {64, 100, 300}, {65, 100, 300}, {7, 9, 1100}}
	if raceEnabled {
		big = big[:2]
	}
	for _, s := range big {
		for tr := range 4 {
			checkSgemm(t, pool, rng, tr&1 == 1, tr&2 == 2, s[0], s[1], s[2], 0.75, -0.5, 5)
		}
	}
}

func checkSgemm(t *testing.T, pool *Pool, rng *rand.Rand, transA, transB bool, m, n, k int, alpha, beta float32, pad int) {
	t.Helper()
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	a := randSlice(rng, (ar-1)*lda+ac)
	b := randSlice(rng, (br-1)*ldb+bc)
	c := randSlice(rng, m*ldc)
	if beta == 0 {
		for i := range c {
			c[i] = float32(math.NaN()) // must not be read
		}
	}
	want, mag := refGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	pool.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	for i := range m {
		for j := range n {
			got := float64(c[i*ldc+j])
			if e := math.Abs(got - want[i*n+j]); !(e <= bound(k, mag[i*n+j])) {
				t.Fatalf("Sgemm(tA=%v tB=%v m=%d n=%d k=%d α=%v β=%v)[%d,%d] = %v, want %v (error %.3g > bound %.3g)",
					transA, transB, m, n, k, alpha, beta, i, j, got, want[i*n+j], e, bound(k, mag[i*n+j]))
			}
		}
		for j := n; j < ldc && i*ldc+j < len(c); j++ {
			if beta != 0 && c[i*ldc+j] != c[i*ldc+j] {
				t.Fatalf("Sgemm wrote padding at [%d,%d]", i, j)
			}
		}
	}
}

func TestSgemmDegenerate(t *testing.T) {
	pool := NewPool(1)
	defer pool.Close()
	c := []float32{1, float32(math.NaN()), 3, 4}
	pool.Sgemm(false, false, 2, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
	for i, v := range c {
		if v != 0 {
			t.Fatalf("k=0, beta=0: c[%d] = %v, want 0", i, v)
		}
	}
	c = []float32{1, 2, 3, 4}
	a := []float32{1, 2, 3, 4}
	pool.Sgemm(false, false, 2, 2, 2, 0, a, 2, a, 2, 2, c, 2)
	for i, v := range c {
		if v != float32(2*(i+1)) {
			t.Fatalf("alpha=0, beta=2: c[%d] = %v, want %v", i, v, 2*(i+1))
		}
	}
	pool.Sgemm(false, false, 0, 5, 5, 1, nil, 5, make([]float32, 25), 5, 0, nil, 5)
}

func TestSgemmPanicsOnShortSlice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a too short matrix")
		}
	}()
	NewPool(1).Sgemm(false, false, 4, 4, 4, 1, make([]float32, 15), 4, make([]float32, 16), 4, 0, make([]float32, 16), 4)
}

// linearCase is one weight format under test: its fp32 values (exactly
// what the kernel sees) and a call of the pool's kernel.
type linearCase struct {
	name string
	w    []float32
	mul  func(p *Pool, y, x []float32, batch int)
	// xInt16 marks kernels that may quantize a single activation row to
	// int16 per block of Q8Block, adding at most |w|·amax/32767/2 per
	// product (amax the largest |x| of the block).
	xInt16 bool
}

func linearCases(rng *rand.Rand, rows, cols int) []linearCase {
	w := randSlice(rng, rows*cols)
	wb := make([]uint16, len(w))
	F32ToBF16(wb, w)
	wbf := make([]float32, len(w))
	BF16ToF32(wbf, wb)
	q, err := QuantizeQ8(w, rows, cols)
	if err != nil {
		panic(err)
	}
	wq, _ := q.Dequantize()
	return []linearCase{
		{"f32", w, func(p *Pool, y, x []float32, batch int) {
			if batch == 1 {
				p.MatVec(y, w, rows, cols, x)
				return
			}
			p.MatMul(y, w, rows, cols, x, batch)
		}, false},
		{"bf16", wbf, func(p *Pool, y, x []float32, batch int) {
			if batch == 1 {
				p.MatVecBF16(y, wb, rows, cols, x)
				return
			}
			p.MatMulBF16(y, wb, rows, cols, x, batch)
		}, false},
		{"q8", wq, func(p *Pool, y, x []float32, batch int) {
			if batch == 1 {
				p.MatVecQ8(y, q, x)
				return
			}
			p.MatMulQ8(y, q, x, batch)
		}, true},
	}
}

func TestMatMul(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][2]int{{1, 1}, {5, 17}, {17, 63}, {63, 257}, {257, 5}, {8, 1100}, {130, 2100}, {1000, 96}}
	if raceEnabled {
		shapes = [][2]int{{5, 17}, {130, 300}}
	}
	for _, s := range shapes {
		rows, cols := s[0], s[1]
		for _, lc := range linearCases(rng, rows, cols) {
			for _, batch := range []int{1, 2, 3, 4, 7, 8, 16, 37, 64, 65} {
				x := randSlice(rng, batch*cols)
				y := make([]float32, batch*rows)
				amax := make([]float64, len(x)) // largest |x| of each element's block
				for b := range batch {
					for c0 := 0; c0 < cols; c0 += Q8Block {
						blk := x[b*cols+c0 : b*cols+min(cols, c0+Q8Block)]
						var m float64
						for _, v := range blk {
							m = max(m, math.Abs(float64(v)))
						}
						for i := range blk {
							amax[b*cols+c0+i] = m
						}
					}
				}
				for i := range y {
					y[i] = float32(math.NaN())
				}
				lc.mul(pool, y, x, batch)
				for b := range batch {
					for r := range rows {
						var want, mag, quant float64
						for i := range cols {
							v := float64(lc.w[r*cols+i]) * float64(x[b*cols+i])
							want += v
							mag += math.Abs(v)
							if lc.xInt16 {
								quant += math.Abs(float64(lc.w[r*cols+i])) * amax[b*cols+i] / 32767 / 2
							}
						}
						got := float64(y[b*rows+r])
						if e := math.Abs(got - want); !(e <= bound(cols, mag)+quant) {
							t.Fatalf("%s %d×%d batch %d: y[%d,%d] = %v, want %v (error %.3g > bound %.3g)",
								lc.name, rows, cols, batch, b, r, got, want, e, bound(cols, mag)+quant)
						}
					}
				}
			}
		}
	}
}

func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 70 {
		a, b := randSlice(rng, n), randSlice(rng, n)
		var want, mag float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			mag += math.Abs(float64(a[i]) * float64(b[i]))
		}
		if got := float64(Dot(a, b)); math.Abs(got-want) > bound(n, mag) {
			t.Fatalf("Dot n=%d = %v, want %v", n, got, want)
		}
	}
}

func TestBF16(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above half
		{0x3f807fff, 0x3f80}, // below half
		{0x7f7fffff, 0x7f80}, // max float overflows to +Inf
		{0xff800000, 0xff80}, // -Inf
		{0x80000000, 0x8000}, // -0
		{0x00000001, 0x0000}, // smallest subnormal rounds to 0
	}
	for _, c := range cases {
		var dst [1]uint16
		F32ToBF16(dst[:], []float32{math.Float32frombits(c.in)})
		if dst[0] != c.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", c.in, dst[0], c.want)
		}
	}
	var nan [1]uint16
	F32ToBF16(nan[:], []float32{math.Float32frombits(0x7f800001)})
	if back := bf16(nan[0]); !math.IsNaN(float64(back)) {
		t.Errorf("NaN became %v", back)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	src := randSlice(rng, 1000)
	h := make([]uint16, len(src))
	F32ToBF16(h, src)
	back := make([]float32, len(src))
	BF16ToF32(back, h)
	for i, v := range src {
		// Round-to-nearest: the error is at most half a bf16 ulp (2⁻⁸ relative).
		if e := math.Abs(float64(back[i] - v)); e > math.Abs(float64(v))*math.Ldexp(1, -8) {
			t.Fatalf("bf16 round trip of %v gave %v", v, back[i])
		}
	}
}

func TestQuantizeQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	rows, cols := 7, 70
	w := randSlice(rng, rows*cols)
	for i := range cols {
		w[3*cols+i] = 0 // an all-zero row gets zero scales
	}
	q, err := QuantizeQ8(w, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	if q.BlocksPerRow() != 3 || len(q.Scales) != rows*3 {
		t.Fatalf("blocks per row %d, %d scales", q.BlocksPerRow(), len(q.Scales))
	}
	deq, err := q.Dequantize()
	if err != nil {
		t.Fatal(err)
	}
	for r := range rows {
		for c := range cols {
			s := q.Scales[r*3+c/Q8Block]
			if e := math.Abs(float64(deq[r*cols+c] - w[r*cols+c])); e > float64(s)*0.5001 {
				t.Fatalf("[%d,%d]: %v quantized to %v, error %v > scale/2 = %v", r, c, w[r*cols+c], deq[r*cols+c], e, s/2)
			}
		}
	}
	if _, err := QuantizeQ8(w, rows, cols+1); err == nil {
		t.Error("shape mismatch accepted")
	}
	w[5] = float32(math.Inf(1))
	if _, err := QuantizeQ8(w, rows, cols); err == nil {
		t.Error("infinite weight accepted")
	}
	if _, err := (Q8Matrix{Rows: 2, Cols: 40, Data: make([]int8, 80), Scales: make([]float32, 3)}).Dequantize(); err == nil {
		t.Error("short Scales accepted")
	}
}

func TestPool(t *testing.T) {
	if n := NewPool(0).Threads(); n < 1 {
		t.Fatalf("NewPool(0) has %d threads", n)
	}
	var nilPool *Pool
	y := make([]float32, 2)
	nilPool.MatVec(y, []float32{1, 2, 3, 4}, 2, 2, []float32{1, 1})
	if y[0] != 3 || y[1] != 7 || nilPool.Threads() != 1 {
		t.Fatalf("nil pool: y = %v", y)
	}
	p := NewPool(3)
	rng := rand.New(rand.NewPCG(11, 12))
	a, b := randSlice(rng, 200*300), randSlice(rng, 300*100)
	want := make([]float32, 200*100)
	NewPool(1).Sgemm(false, false, 200, 100, 300, 1, a, 300, b, 100, 0, want, 100)
	// Concurrent callers share the pool safely (run with -race).
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			c := make([]float32, 200*100)
			p.Sgemm(false, false, 200, 100, 300, 1, a, 300, b, 100, 0, c, 100)
			for i := range c {
				if c[i] != want[i] {
					t.Errorf("goroutine %d: c[%d] = %v, want %v", g, i, c[i], want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	p.Close()
	p.Close()
	c := make([]float32, 200*100)
	p.Sgemm(false, false, 200, 100, 300, 1, a, 300, b, 100, 0, c, 100)
	if c[17] != want[17] {
		t.Fatal("closed pool gave a different result")
	}
}

// A call completes on the threads that run: a worker held up elsewhere
// (here: still busy with a hand-off that blocks) neither stalls the call nor
// loses a task, and gets a later call's work once it is free.
func TestPoolDoesNotWaitForABusyWorker(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	release := make(chan struct{})
	p.workers[0] <- func() { <-release }
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := randSlice(rng, 200*300), randSlice(rng, 300*100)
	want := make([]float32, 200*100)
	NewPool(1).Sgemm(false, false, 200, 100, 300, 1, a, 300, b, 100, 0, want, 100)
	finished := make(chan []float32)
	go func() {
		counts := make([]int32, 1000)
		for range 3 { // the first call fills the worker's hand-off buffer
			p.Parallel(len(counts), func(i int) { atomic.AddInt32(&counts[i], 1) })
		}
		for i, n := range counts {
			if n != 3 {
				t.Errorf("item %d ran %d times in 3 calls", i, n)
				break
			}
		}
		c := make([]float32, 200*100)
		p.Sgemm(false, false, 200, 100, 300, 1, a, 300, b, 100, 0, c, 100)
		finished <- c
	}()
	select {
	case c := <-finished:
		if !slices.Equal(c, want) {
			t.Error("Sgemm beside a busy worker differs from one thread's")
		}
	case <-time.After(time.Minute):
		t.Fatal("calls waited for a worker that could not start")
	}
	close(release)
	var ran atomic.Int64
	p.Parallel(100, func(int) { ran.Add(1) })
	if ran.Load() != 100 {
		t.Errorf("after the worker is free: %d of 100 items ran", ran.Load())
	}
}

// TestRunClaimsEveryTaskOnce checks the pool's task claiming: every task
// runs exactly once, whatever the thread count, the number of tasks
// (fewer than threads, not a multiple of them) and which thread gets to
// its share first.
func TestRunClaimsEveryTaskOnce(t *testing.T) {
	for _, threads := range []int{2, 3, 4} {
		p := NewPool(threads)
		for tasks := range 20 {
			for nt := 1; nt <= threads; nt++ {
				counts := make([]atomic.Int32, tasks)
				var badTid atomic.Bool
				p.acquire()
				p.run(nt, tasks, func(tid, task int) {
					if tid < 0 || tid >= max(1, min(nt, tasks)) {
						badTid.Store(true)
					}
					counts[task].Add(1)
				})
				p.release()
				for i := range counts {
					if n := counts[i].Load(); n != 1 {
						t.Fatalf("pool of %d, %d threads, %d tasks: task %d ran %d times", threads, nt, tasks, i, n)
					}
				}
				if badTid.Load() {
					t.Fatalf("pool of %d, %d threads, %d tasks: a thread id out of range", threads, nt, tasks)
				}
			}
		}
		p.Close()
	}
}

func TestPhysicalCores(t *testing.T) {
	if n := PhysicalCores(); n < 1 {
		t.Fatalf("PhysicalCores() = %d", n)
	}
	dir := t.TempDir()
	// Two packages × two cores × two hyper-threads.
	var info string
	for cpu := range 8 {
		pkg, core := cpu/4, (cpu/2)%2
		info += fmt.Sprintf("processor\t: %d\nphysical id\t: %d\ncore id\t\t: %d\n\n", cpu, pkg, core)
		topo := filepath.Join(dir, "sys", fmt.Sprintf("cpu%d", cpu), "topology")
		if err := os.MkdirAll(topo, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(topo, "core_id"), fmt.Appendf(nil, "%d\n", core), 0o644)
		os.WriteFile(filepath.Join(topo, "physical_package_id"), fmt.Appendf(nil, "%d\n", pkg), 0o644)
	}
	cpuinfo := filepath.Join(dir, "cpuinfo")
	os.WriteFile(cpuinfo, []byte(info), 0o644)
	if n := coresFromCPUInfo(cpuinfo); n != 4 {
		t.Errorf("coresFromCPUInfo = %d, want 4", n)
	}
	if n := coresFromSysfs(filepath.Join(dir, "sys")); n != 4 {
		t.Errorf("coresFromSysfs = %d, want 4", n)
	}
	if n := coresFromSysfs(filepath.Join(dir, "missing")); n != 0 {
		t.Errorf("coresFromSysfs(missing) = %d, want 0", n)
	}
}

// TestBlocking checks the divisibility the driver relies on: packed Q8
// B blocks start at a scale boundary, and M and N blocks hold whole tiles.
func TestBlocking(t *testing.T) {
	if gemmKC%Q8Block != 0 || linearKC%Q8Block != 0 {
		t.Errorf("gemmKC %d and linearKC %d must be multiples of Q8Block %d", gemmKC, linearKC, Q8Block)
	}
	if gemmMC%(2*gemmMR) != 0 || gemmNC%(2*gemmNR) != 0 {
		t.Errorf("gemmMC %d / gemmNC %d must be multiples of the %d×%d wide tile", gemmMC, gemmNC, 2*gemmMR, 2*gemmNR)
	}
	t.Logf("kernel set in use: %s", Kernels())
}

func TestGemvAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, rows := range []int{1, 3, 4, 9, 130} {
		for _, cols := range []int{1, 7, 64, 100, 129} {
			ldw := cols + 3
			w := randSlice(rng, (rows-1)*ldw+cols)
			x := randSlice(rng, cols)
			y := make([]float32, rows)
			Gemv(y, w, rows, cols, ldw, x)
			for i := range rows {
				var want, mag float64
				for j := range cols {
					v := float64(w[i*ldw+j]) * float64(x[j])
					want, mag = want+v, mag+math.Abs(v)
				}
				if e := math.Abs(float64(y[i]) - want); e > bound(cols, mag) {
					t.Fatalf("Gemv %d×%d: y[%d] = %v, want %v", rows, cols, i, y[i], want)
				}
			}
			xt := randSlice(rng, rows)
			yt := randSlice(rng, cols)
			y0 := append([]float32(nil), yt...)
			GemvT(yt, w, rows, cols, ldw, xt)
			for j := range cols {
				want, mag := float64(y0[j]), math.Abs(float64(y0[j]))
				for i := range rows {
					v := float64(w[i*ldw+j]) * float64(xt[i])
					want, mag = want+v, mag+math.Abs(v)
				}
				if e := math.Abs(float64(yt[j]) - want); e > bound(rows, mag) {
					t.Fatalf("GemvT %d×%d: y[%d] = %v, want %v", rows, cols, j, yt[j], want)
				}
			}
		}
	}
	for n := range 40 {
		x, y := randSlice(rng, n), randSlice(rng, n)
		y0 := append([]float32(nil), y...)
		Axpy(y, -0.75, x)
		for i := range y {
			// One FMA or a rounded product and sum: within 2 ulps.
			want := float64(y0[i]) - 0.75*float64(x[i])
			if e := math.Abs(float64(y[i]) - want); e > math.Ldexp(1, -22)*(math.Abs(float64(y0[i]))+math.Abs(0.75*float64(x[i]))) {
				t.Fatalf("Axpy n=%d: y[%d] = %v, want %v", n, i, y[i], want)
			}
		}
	}
}

// TestQ8Int16 checks the integer Q8 mat-vec kernel (and its portable twin)
// against float64, including a block whose activations are all zero, and
// that a NaN activation reaches the result instead of being quantized away.
func TestQ8Int16(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const rows, cols = 8, 100
	w := randSlice(rng, rows*cols)
	q, err := QuantizeQ8(w, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	wq, _ := q.Dequantize()
	x := randSlice(rng, cols)
	clear(x[32:64])
	nblk := cols / Q8Block
	xq, xs, xd := make([]int16, cols), make([]float32, q.BlocksPerRow()), make([]float32, cols)
	if !quantizeActivation(xd, xq, xs, x) {
		t.Fatal("finite activations refused")
	}
	bpr := q.BlocksPerRow()
	xr := q8RowFor(xq, xs, nblk)
	for name, kern := range map[string]func(k int, w []int8, ldw int, xr q8Row, x []float32, scales []float32, lds int, out *[4]float32){
		"dispatch": rows4Q8X16, "go": rows4Q8X16Go,
	} {
		for r0 := 0; r0 < rows; r0 += 4 {
			var out [4]float32
			kern(cols, q.Data[r0*cols:], cols, xr, x, q.Scales[r0*bpr:], bpr, &out)
			for r := range 4 {
				var want, mag, quant float64
				for i := range cols {
					v := float64(wq[(r0+r)*cols+i]) * float64(x[i])
					want, mag = want+v, mag+math.Abs(v)
					if i < nblk*Q8Block {
						quant += math.Abs(float64(wq[(r0+r)*cols+i])) * float64(xs[i/Q8Block]) / 2
					}
				}
				if e := math.Abs(float64(out[r]) - want); e > bound(cols, mag)+quant {
					t.Fatalf("%s: row %d = %v, want %v (error %.3g)", name, r0+r, out[r], want, e)
				}
			}
		}
	}
	for i, v := range xd {
		if e := math.Abs(float64(v - x[i])); e > float64(xs[i/Q8Block])/2*1.0001 {
			t.Fatalf("activation %d: %v quantized to %v", i, x[i], v)
		}
	}
	for _, i := range []int{5, 70, 97} { // blocks 0 and 2, and the partial block
		v := x[i]
		x[i] = float32(math.Inf(-1))
		if quantizeActivation(xd, xq, xs, x) {
			t.Fatalf("Inf activation at %d accepted for int16 quantization", i)
		}
		x[i] = v
	}
	x[5] = float32(math.NaN())
	if quantizeActivation(xd, xq, xs, x) {
		t.Fatal("NaN activation accepted for int16 quantization")
	}
	y := make([]float32, rows)
	NewPool(1).MatVecQ8(y, q, x)
	if !math.IsNaN(float64(y[0])) {
		t.Fatalf("NaN activation gave %v", y[0])
	}
}

// FuzzParseCPUInfo checks that any /proc/cpuinfo text gives a core count
// in [0, number of lines] without panicking.
func FuzzParseCPUInfo(f *testing.F) {
	f.Add("processor\t: 0\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n")
	f.Add("core id: x\nphysical id: -3\ncore id: 7\n\n\n:")
	f.Fuzz(func(t *testing.T, text string) {
		n := parseCPUInfo(strings.NewReader(text))
		if n < 0 || n > strings.Count(text, "\n")+1 {
			t.Fatalf("parseCPUInfo gave %d cores for %d lines", n, strings.Count(text, "\n")+1)
		}
	})
}

// TestQ8BatchConsistency checks that a sequence's Q8 result does not
// depend on the batch it is computed in beyond float32 rounding: the
// single-row integer kernel, the small-batch float kernels and the packed
// GEMM all see the same quantized activations.
func TestQ8BatchConsistency(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const rows, cols = 40, 1000
	w := randSlice(rng, rows*cols)
	q, _ := QuantizeQ8(w, rows, cols)
	wq, _ := q.Dequantize()
	pool := NewPool(2)
	defer pool.Close()
	const batch = 70 // past smallM, so the packed driver runs
	x := randSlice(rng, batch*cols)
	yBig := make([]float32, batch*rows)
	pool.MatMulQ8(yBig, q, x, batch)
	ySmall := make([]float32, 5*rows)
	pool.MatMulQ8(ySmall, q, x, 5)
	for b := range 5 {
		y1 := make([]float32, rows)
		pool.MatVecQ8(y1, q, x[b*cols:(b+1)*cols])
		for r := range rows {
			var mag float64
			for i := range cols {
				mag += math.Abs(float64(wq[r*cols+i]) * float64(x[b*cols+i]))
			}
			tol := 2 * bound(cols, mag) // two float32 results, each within bound of the same exact value
			if d := math.Abs(float64(y1[r] - ySmall[b*rows+r])); d > tol {
				t.Fatalf("row %d of sequence %d: batch 1 gives %v, batch 5 gives %v", r, b, y1[r], ySmall[b*rows+r])
			}
			if d := math.Abs(float64(y1[r] - yBig[b*rows+r])); d > tol {
				t.Fatalf("row %d of sequence %d: batch 1 gives %v, batch %d gives %v", r, b, y1[r], batch, yBig[b*rows+r])
			}
		}
	}
}

// TestRowKernels checks the mat-vec building blocks directly against
// float64 for every column count up to 100 and a few long ones, so that
// each vector width's ragged tail (8, 16, 32 columns) is covered, with
// padded rows and one and two batch rows.
func TestRowKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	ks := make([]int, 0, 110)
	for k := 1; k <= 100; k++ {
		ks = append(ks, k)
	}
	ks = append(ks, 255, 1023, 1025)
	for _, k := range ks {
		ldw, ldx := k+3, k+5
		w := randSlice(rng, 4*ldw) // the padding of each row is never read
		x := randSlice(rng, 3*ldx+k)
		wb := make([]uint16, len(w))
		F32ToBF16(wb, w)
		wf := make([]float32, len(w)) // the bf16 weights as fp32
		BF16ToF32(wf, wb)
		q, err := QuantizeQ8(w, 4, ldw)
		if err != nil {
			t.Fatal(err)
		}
		wq, _ := q.Dequantize()
		bpr := q.BlocksPerRow()
		check := func(name string, ww []float32, nw, nb int, out *[8]float32, at func(b, r int) int) {
			t.Helper()
			for b := range nb {
				for r := range nw {
					var want, mag float64
					for i := range k {
						v := float64(ww[r*ldw+i]) * float64(x[b*ldx+i])
						want, mag = want+v, mag+math.Abs(v)
					}
					got := float64(out[at(b, r)])
					if e := math.Abs(got - want); !(e <= bound(k, mag)) {
						t.Fatalf("%s k=%d: out[b=%d, r=%d] = %v, want %v (error %.3g > %.3g)", name, k, b, r, got, want, e, bound(k, mag))
					}
				}
			}
		}
		for nb := 1; nb <= 2; nb++ {
			var out [8]float32
			rows4F32(k, w, ldw, x, ldx, nb, &out)
			check(fmt.Sprintf("rows4F32 nb=%d", nb), w, 4, nb, &out, func(b, r int) int { return b*4 + r })
			rows4BF16(k, wb, ldw, x, ldx, nb, &out)
			check(fmt.Sprintf("rows4BF16 nb=%d", nb), wf, 4, nb, &out, func(b, r int) int { return b*4 + r })
			rows4Q8(k, q.Data, ldw, q.Scales, bpr, x, ldx, nb, &out)
			check(fmt.Sprintf("rows4Q8 nb=%d", nb), wq, 4, nb, &out, func(b, r int) int { return b*4 + r })
		}
		var out [8]float32
		rows2x4F32(k, w, ldw, x, ldx, &out)
		check("rows2x4F32", w, 2, 4, &out, func(b, r int) int { return b*2 + r })
		rows2x4BF16(k, wb, ldw, x, ldx, &out)
		check("rows2x4BF16", wf, 2, 4, &out, func(b, r int) int { return b*2 + r })
		rows2x4Q8(k, q.Data, ldw, q.Scales, bpr, x, ldx, &out)
		check("rows2x4Q8", wq, 2, 4, &out, func(b, r int) int { return b*2 + r })
	}
}

// q8RowFor is the q8Row that prepare makes of xq and xs for the kernel set
// in use.
func q8RowFor(xq []int16, xs []float32, nblk int) q8Row {
	xr := q8Row{xq: xq, xs: xs}
	if q8ByteKernels() {
		xr.xv = splitQ8Bytes(nil, xq, nblk)
	}
	return xr
}

// TestQ8Exact checks that the integer Q8 mat-vec kernel computes every
// block's products exactly, as the reference does in int32: with scales
// that are powers of two and sums that float32 holds exactly, every step
// is exact in any order, so the kernel must equal the reference bit for
// bit. The activations reach both int16 extremes and every high byte, the
// weights both int8 extremes; block counts cover a lone last block, the
// 16-block groups of the VPDPBUSD kernel and a partial block.
func TestQ8Exact(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, k := range []int{32, 64, 96, 100, 512, 544, 1056, 1088} {
		for _, regime := range []string{"full activations, small weights", "full weights, small activations", "extremes"} {
			ldw := k + 7
			w := make([]int8, 4*ldw)
			xq := make([]int16, k)
			for i := range w {
				switch regime {
				case "full activations, small weights":
					w[i] = int8(rng.IntN(3) - 1)
				case "full weights, small activations":
					w[i] = int8(rng.IntN(255) - 127)
				default:
					w[i] = []int8{-127, 127, 0, 1}[rng.IntN(4)]
				}
			}
			for i := range xq {
				switch regime {
				case "full activations, small weights":
					xq[i] = int16(rng.IntN(65535) - 32767)
				case "full weights, small activations":
					xq[i] = int16(rng.IntN(241) - 120)
				default:
					xq[i] = []int16{-32767, 32767, -256, 255, -1, 0}[rng.IntN(6)]
				}
			}
			nblk := k / Q8Block
			bpr := ceilDiv(k, Q8Block)
			// Scale products in {1/2, 1, 2}: every value is a multiple of
			// 1/2, so float32 holds any sum below 2²³ exactly. Weights
			// are zeroed, in a random order, until Σ|w·x·scale| fits.
			scales := make([]float32, 4*bpr)
			for i := range scales {
				scales[i] = float32(1 + rng.IntN(2))
			}
			xs := make([]float32, bpr)
			for i := range xs {
				xs[i] = float32(math.Ldexp(1, -rng.IntN(2)))
			}
			for r := range 4 {
				budget := float64(1 << 23)
				for _, i := range rng.Perm(k) {
					cost := math.Abs(float64(w[r*ldw+i])*float64(xq[i])) * 2
					if cost > budget {
						w[r*ldw+i] = 0
						continue
					}
					budget -= cost
				}
			}
			// The partial last block uses the float activation: make it
			// the same integers, scaled like the others.
			x := make([]float32, k)
			for i := nblk * Q8Block; i < k; i++ {
				x[i] = float32(xq[i]) * xs[nblk]
			}
			var want, got [4]float32
			rows4Q8X16Go(k, w, ldw, q8Row{xq: xq, xs: xs}, x, scales, bpr, &want)
			rows4Q8X16(k, w, ldw, q8RowFor(xq, xs, nblk), x, scales, bpr, &got)
			if got != want {
				t.Fatalf("k=%d, %s: kernel %v, reference %v", k, regime, got, want)
			}
		}
	}
}
