package kernel

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Pool runs kernels on a fixed set of worker goroutines, one per thread.
// The calling goroutine acts as thread 0, so a Pool of n threads starts n-1
// workers and a call never runs more than n goroutines at once.
//
// A Pool is safe for concurrent use: calls from several goroutines are
// serialised, which keeps the machine from being oversubscribed. The zero
// of *Pool (nil) and a closed Pool run every kernel on the calling
// goroutine.
type Pool struct {
	threads int

	mu      sync.Mutex // serialises calls; guards everything below
	closed  bool
	workers []chan func()
	scratch []threadScratch
}

// threadScratch holds one thread's packing buffers, reused across calls.
type threadScratch struct {
	packA []float32
	packB []float32
	xd    []float32 // activations as the Q8 kernels see them
	xq    []int16   // a single activation row as int16, for the Q8 mat-vec
	xs    []float32 // its per-block scales
	xv    []byte    // xq split into bytes for VPDPBUSD
}

// NewPool starts a pool of the given number of threads. threads <= 0 means
// one per physical core (hyper-threads share the core's FMA units, so they
// only slow compute kernels down).
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = PhysicalCores()
	}
	p := &Pool{threads: threads, scratch: make([]threadScratch, threads)}
	p.workers = make([]chan func(), threads-1)
	for i := range p.workers {
		// One call's hand-off waits in the buffer while the worker ends
		// the previous one's; run never blocks on a send.
		ch := make(chan func(), 1)
		p.workers[i] = ch
		go func() {
			for f := range ch {
				// Run what comes within poolSpin without parking in
				// between: the calls of a decode step come microseconds
				// apart, and a parked worker takes far longer to wake.
				for f != nil {
					f()
					f = pollFor(ch, poolSpin)
				}
			}
		}()
	}
	return p
}

// Threads reports how many threads the pool runs kernels on.
func (p *Pool) Threads() int {
	if p == nil {
		return 1
	}
	return p.threads
}

// Close stops the worker goroutines. Later calls run on the calling
// goroutine alone. Close is idempotent.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for _, ch := range p.workers {
		close(ch)
	}
	p.workers = nil
}

// acquire locks the pool for one kernel call and reports how many threads
// that call may use. The caller must call release.
func (p *Pool) acquire() int {
	if p == nil {
		return 1
	}
	p.mu.Lock()
	if p.closed {
		return 1
	}
	return p.threads
}

func (p *Pool) release() {
	if p != nil {
		p.mu.Unlock()
	}
}

// scratchFor returns thread tid's scratch buffers; the pool must be held.
func (p *Pool) scratchFor(tid int) *threadScratch {
	if p == nil {
		return &threadScratch{}
	}
	return &p.scratch[tid]
}

// run calls f(tid, task) for every task in [0, tasks) on at most nt
// threads, the calling goroutine being thread 0, and returns when every
// task has finished. The tasks are split into nt contiguous shares; each
// thread claims the tasks of its own share first, in order, so that a
// thread meets the same data call after call (in its own caches), and then
// those the others have not claimed yet. The call waits for the tasks, not
// for the workers: a worker whose core is busy with other goroutines (a
// live server's hooks and rendering) or other processes and starts late
// leaves its share to the threads that are running, instead of holding up
// the call, and a worker still behind on an earlier call is not handed the
// next. Thread tid only ever runs on one goroutine, so it may use
// p.scratchFor(tid). The pool must be held with at least nt threads.
func (p *Pool) run(nt, tasks int, f func(tid, task int)) {
	if nt <= 1 || tasks <= 1 {
		for t := range tasks {
			f(0, t)
		}
		return
	}
	nt = min(nt, tasks)
	// next[s] is the next unclaimed task of share s, which ends where
	// share s+1 begins.
	next := make([]atomic.Int64, nt)
	for s := range next {
		next[s].Store(int64(s * tasks / nt))
	}
	var left atomic.Int64
	left.Store(int64(tasks))
	var done sync.WaitGroup
	done.Add(tasks)
	work := func(tid int) {
		for i := range nt {
			s := (tid + i) % nt
			end := int64((s + 1) * tasks / nt)
			for {
				t := next[s].Add(1) - 1
				if t >= end {
					break
				}
				f(tid, int(t))
				left.Add(-1)
				done.Done()
			}
		}
	}
	for i := 1; i < nt; i++ {
		select {
		case p.workers[i-1] <- func() { work(i) }:
		default:
		}
	}
	work(0)
	// The last tasks are usually a few microseconds from done: poll
	// before parking, which would cost a wake-up. This yields to other
	// goroutines (with fewer Ps than threads, the one finishing a task may
	// be waiting for ours) but, unlike an idle worker's polling, not the
	// CPU: on a busy machine another process would take it for a whole
	// time slice.
	for start, i := time.Now(), 0; left.Load() > 0; i++ {
		if i%64 == 63 {
			if time.Since(start) > poolSpin {
				break
			}
			runtime.Gosched()
		}
	}
	done.Wait()
}

// poolSpin is how long a worker keeps polling for the next call, and a
// caller for the last tasks of its call, before parking. Waking a parked
// goroutine's thread takes 5–50 µs (longer for an idle vCPU, whose wake-up
// goes through the hypervisor), which is more than the gaps between the
// parallel calls of a decode step and more than many of those calls take:
// on the bundled model's decode, two threads that parked between calls
// were slower than one (BenchmarkBundledDecode, model/BENCHMARKS.md).
const poolSpin = 300 * time.Microsecond

// pollFor returns the next function sent on ch within d, or nil when none
// came or ch is closed. It yields now and then to other goroutines and the
// CPU to other threads (osYield), so that the polling holds up neither
// the caller's goroutine (when there are fewer Ps than pool threads) nor,
// on a machine with more runnable threads than CPUs, the pool's own thread
// that the OS put on the same CPU.
func pollFor(ch chan func(), d time.Duration) func() {
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case f, ok := <-ch:
			if !ok {
				return nil
			}
			return f
		default:
		}
		if i%64 == 63 {
			if time.Since(start) > d {
				return nil
			}
			runtime.Gosched()
			osYield()
		}
	}
}

// Parallel calls fn(i) for every i in [0, n) on the pool's threads, in
// contiguous ranges claimed as threads come free. It holds the pool, so fn
// must not call it.
func (p *Pool) Parallel(n int, fn func(i int)) {
	nt := p.acquire()
	defer p.release()
	// A few ranges per thread balance uneven items (attention rows of
	// different lengths) without a claim per item.
	tasks := min(n, 4*nt)
	p.run(nt, tasks, func(_, t int) {
		for i := t * n / tasks; i < (t+1)*n/tasks; i++ {
			fn(i)
		}
	})
}

// PhysicalCores reports the number of physical cores this process may use:
// the distinct (package, core) pairs in sysfs or /proc/cpuinfo, capped by
// runtime.NumCPU (which honours the CPU affinity mask) and GOMAXPROCS (more
// threads than that would only queue). It falls back to that cap when the
// topology cannot be read.
func PhysicalCores() int {
	n := min(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	cores := coresFromSysfs("/sys/devices/system/cpu")
	if cores == 0 {
		cores = coresFromCPUInfo("/proc/cpuinfo")
	}
	if cores > 0 && cores < n {
		return cores
	}
	return n
}

// coresFromSysfs counts distinct (physical_package_id, core_id) pairs under
// dir/cpu*/topology; 0 means unknown.
func coresFromSysfs(dir string) int {
	paths, err := filepath.Glob(filepath.Join(dir, "cpu[0-9]*", "topology", "core_id"))
	if err != nil || len(paths) == 0 {
		return 0
	}
	seen := make(map[[2]int]bool)
	for _, path := range paths {
		core, err := readInt(path)
		if err != nil {
			return 0
		}
		pkg, err := readInt(filepath.Join(filepath.Dir(path), "physical_package_id"))
		if err != nil {
			pkg = 0
		}
		seen[[2]int{pkg, core}] = true
	}
	return len(seen)
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// coresFromCPUInfo counts distinct (physical id, core id) pairs in a
// /proc/cpuinfo-formatted file; 0 means unknown.
func coresFromCPUInfo(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseCPUInfo(f)
}

// parseCPUInfo counts distinct (physical id, core id) pairs in
// /proc/cpuinfo text: one block per logical CPU, blank-line separated.
func parseCPUInfo(r io.Reader) int {
	seen := make(map[[2]int]bool)
	pkg, core := -1, -1
	flush := func() {
		if core >= 0 {
			seen[[2]int{max(pkg, 0), core}] = true
		}
		pkg, core = -1, -1
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			if strings.TrimSpace(line) == "" {
				flush()
			}
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(val))
		switch strings.TrimSpace(key) {
		case "physical id":
			if err == nil {
				pkg = v
			}
		case "core id":
			if err == nil {
				core = v
			}
		}
	}
	flush()
	if sc.Err() != nil {
		return 0
	}
	return len(seen)
}
