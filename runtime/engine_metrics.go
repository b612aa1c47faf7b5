package runtime

import (
	"sync"

	"github.com/livehat/livehat/model/engine"
	"github.com/prometheus/client_golang/prometheus"
)

// EngineMetrics exports the scheduler counters of the local engines that
// live sessions share, labelled by model, read at each scrape: the seconds
// each engine spent stepping (its rate is the utilisation its waiting line
// follows, the figure a latency tail is read against), its steps and the
// sequences they advanced (their ratio is the mean batch), the requests in
// its batch and waiting for it, and its prefix cache's lookups and hits.
// An EngineMetrics is safe for concurrent use; a nil one ignores Watch and
// Forget.
type EngineMetrics struct {
	mu      sync.Mutex
	engines map[string]*engine.Engine

	busy, steps, sequences, active, waiting, lookups, hitTokens *prometheus.Desc
}

// NewEngineMetrics creates the collector and registers it with reg.
func NewEngineMetrics(reg prometheus.Registerer) (*EngineMetrics, error) {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("livehat", "engine", name), help, []string{"model"}, nil)
	}
	m := &EngineMetrics{
		engines:   map[string]*engine.Engine{},
		busy:      desc("busy_seconds_total", "Wall time the engine spent in model steps; its rate is the engine's utilisation."),
		steps:     desc("steps_total", "Model steps run."),
		sequences: desc("step_sequences_total", "Sequences advanced over all steps; over steps_total, the mean batch."),
		active:    desc("active_requests", "Requests in the engine's batch."),
		waiting:   desc("waiting_requests", "Requests waiting for a place in the batch."),
		lookups:   desc("prefix_cache_lookups_total", "Prompts looked up in the prefix cache."),
		hitTokens: desc("prefix_cache_hit_tokens_total", "Prompt tokens restored from the prefix cache."),
	}
	if err := reg.Register(m); err != nil {
		return nil, err
	}
	return m, nil
}

// Watch exports e's counters under the model label name, in place of any
// engine watched under that name before.
func (m *EngineMetrics) Watch(name string, e *engine.Engine) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.engines[name] = e
}

// Forget stops exporting the engine watched under name.
func (m *EngineMetrics) Forget(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.engines, name)
}

// Describe implements prometheus.Collector.
func (m *EngineMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.busy, m.steps, m.sequences, m.active, m.waiting, m.lookups, m.hitTokens} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *EngineMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, e := range m.engines {
		st := e.Stats()
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, name)
		}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
		}
		counter(m.busy, st.Busy.Seconds())
		counter(m.steps, float64(st.Steps))
		counter(m.sequences, float64(st.StepSequences))
		gauge(m.active, float64(st.Active))
		gauge(m.waiting, float64(st.Waiting))
		counter(m.lookups, float64(st.PrefixCache.Lookups))
		counter(m.hitTokens, float64(st.PrefixCache.HitTokens))
	}
}
