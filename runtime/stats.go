package runtime

import (
	"sort"
	"sync"
	"time"
)

// LatencyStats keeps the timings of the most recent turns and reports
// rolling percentiles. It is safe for concurrent use.
type LatencyStats struct {
	mu   sync.Mutex
	ring []Timing
	next int
	full bool
	n    int
}

// NewLatencyStats keeps the last size turns.
func NewLatencyStats(size int) *LatencyStats {
	return &LatencyStats{ring: make([]Timing, max(size, 1))}
}

// Add records a turn.
func (l *LatencyStats) Add(t Timing) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ring[l.next] = t
	l.next = (l.next + 1) % len(l.ring)
	l.full = l.full || l.next == 0
	l.n++
}

// Percentiles are P50, P95 and P99 of one measure.
type Percentiles struct {
	P50 time.Duration `json:"p50_ns"`
	P95 time.Duration `json:"p95_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// Snapshot is a JSON-ready summary of recent turns.
type Snapshot struct {
	Turns      int         `json:"turns"`
	Window     int         `json:"window"`
	Total      Percentiles `json:"total"`
	FirstChunk Percentiles `json:"first_chunk"`
	Queue      Percentiles `json:"queue"`
	Model      Percentiles `json:"model"`
	// OutsideModel is the share of total turn time not spent in the model
	// (queue excluded): hooks, tools, rendering, scheduling.
	OutsideModel float64 `json:"outside_model"`
}

// Snapshot summarises the recorded window.
func (l *LatencyStats) Snapshot() Snapshot {
	l.mu.Lock()
	window := l.ring[:l.next]
	if l.full {
		window = l.ring
	}
	ts := append([]Timing(nil), window...)
	n := l.n
	l.mu.Unlock()
	pick := func(f func(Timing) time.Duration) Percentiles {
		if len(ts) == 0 {
			return Percentiles{}
		}
		v := make([]time.Duration, len(ts))
		for i, t := range ts {
			v[i] = f(t)
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		at := func(p float64) time.Duration { return v[min(len(v)-1, int(p*float64(len(v))))] }
		return Percentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99)}
	}
	s := Snapshot{Turns: n, Window: len(ts),
		Total:      pick(func(t Timing) time.Duration { return t.Total }),
		FirstChunk: pick(func(t Timing) time.Duration { return t.FirstChunk }),
		Queue:      pick(func(t Timing) time.Duration { return t.Queue }),
		Model:      pick(func(t Timing) time.Duration { return t.Model }),
	}
	var busy, outside time.Duration
	for _, t := range ts {
		work := t.Total - t.Queue
		busy += work
		outside += work - t.Model
	}
	if busy > 0 {
		s.OutsideModel = float64(outside) / float64(busy)
	}
	return s
}
