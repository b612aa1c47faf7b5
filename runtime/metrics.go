package runtime

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/model/remote"
)

// Metrics exports the runtime's latency and outcome accounting as
// Prometheus metrics, labelled by stream. One Metrics serves every session
// of a process; register it with a prometheus.Registerer (the console
// serves it on /metrics).
type Metrics struct {
	turnSeconds       *prometheus.HistogramVec
	firstChunkSeconds *prometheus.HistogramVec
	modelSeconds      *prometheus.HistogramVec
	queueSeconds      *prometheus.HistogramVec
	turns             *prometheus.CounterVec
	dropped           *prometheus.CounterVec
	cachedTokens      *prometheus.CounterVec
	promptTokens      *prometheus.CounterVec
	completionTokens  *prometheus.CounterVec
	decodeSeconds     *prometheus.CounterVec
	queueDepth        *prometheus.GaugeVec
}

// NewMetrics creates the collectors and registers them with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	buckets := []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 6, 8, 12, 20}
	hist := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "livehat", Subsystem: "turn", Name: name, Help: help, Buckets: buckets}, []string{"stream"})
	}
	m := &Metrics{
		turnSeconds:       hist("total_seconds", "Time from a message's arrival to the end of its turn."),
		firstChunkSeconds: hist("first_chunk_seconds", "Time from a message's arrival to its first speakable chunk."),
		modelSeconds:      hist("model_seconds", "Time a turn spent in the model."),
		queueSeconds:      hist("queue_seconds", "Time a message waited in the session queue."),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "livehat", Subsystem: "turn", Name: "total",
			Help: "Turns by outcome."}, []string{"stream", "outcome"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "livehat", Subsystem: "queue", Name: "dropped_total",
			Help: "Viewer messages dropped, by reason (shed, stale)."}, []string{"stream", "reason"}),
		cachedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "livehat", Subsystem: "model", Name: "cached_prompt_tokens_total",
			Help: "Prompt tokens served from the prefix cache."}, []string{"stream"}),
		promptTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "livehat", Subsystem: "model", Name: "prompt_tokens_total",
			Help: "Prompt tokens of all generations."}, []string{"stream"}),
		// Decode tokens per second is the ratio of the rates of these two.
		completionTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "livehat", Subsystem: "model", Name: "completion_tokens_total",
			Help: "Tokens generated."}, []string{"stream"}),
		decodeSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "livehat", Subsystem: "model", Name: "decode_seconds_total",
			Help: "Time spent generating tokens (prefill excluded)."}, []string{"stream"}),
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "livehat", Subsystem: "queue", Name: "depth",
			Help: "Viewer messages waiting in the session queue."}, []string{"stream"}),
	}
	for _, c := range []prometheus.Collector{m.turnSeconds, m.firstChunkSeconds, m.modelSeconds, m.queueSeconds, m.turns, m.dropped,
		m.cachedTokens, m.promptTokens, m.completionTokens, m.decodeSeconds, m.queueDepth} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// setQueueDepth records how many messages a session's queue holds.
func (m *Metrics) setQueueDepth(stream string, n int) {
	if m != nil {
		m.queueDepth.WithLabelValues(stream).Set(float64(n))
	}
}

// observe records a session event; a nil Metrics records nothing.
func (m *Metrics) observe(stream string, e Event) {
	if m == nil {
		return
	}
	switch e.Kind {
	case EventTurn:
		t := e.Record
		m.turns.WithLabelValues(stream, string(t.Outcome)).Inc()
		if t.Outcome != OutcomeReplied && t.Outcome != OutcomeSafeLine {
			return
		}
		m.turnSeconds.WithLabelValues(stream).Observe(t.Timing.Total.Seconds())
		m.firstChunkSeconds.WithLabelValues(stream).Observe(t.Timing.FirstChunk.Seconds())
		m.modelSeconds.WithLabelValues(stream).Observe(t.Timing.Model.Seconds())
		m.queueSeconds.WithLabelValues(stream).Observe(t.Timing.Queue.Seconds())
		m.promptTokens.WithLabelValues(stream).Add(float64(t.Timing.PromptTokens))
		m.cachedTokens.WithLabelValues(stream).Add(float64(t.Timing.CachedTokens))
		m.completionTokens.WithLabelValues(stream).Add(float64(t.Timing.CompletionTokens))
		m.decodeSeconds.WithLabelValues(stream).Add(t.Timing.Decode.Seconds())
	case EventDropped:
		reason := e.Reason
		for i, c := range reason {
			if c == ':' {
				reason = reason[:i]
				break
			}
		}
		m.dropped.WithLabelValues(stream, reason).Inc()
	}
}

// RemoteMetrics counts the requests a process makes to model servers, by
// server and outcome, for /metrics.
type RemoteMetrics struct {
	attempts *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
}

// NewRemoteMetrics creates the collectors and registers them with reg; when
// reg already has them (the serve command and the console share one
// registry), those are used.
func NewRemoteMetrics(reg prometheus.Registerer) (*RemoteMetrics, error) {
	m := &RemoteMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "livehat", Subsystem: "remote", Name: "requests_total",
			Help: "Requests to model servers, by server and outcome (ok, unreachable, reset, timeout, rate_limited, server_error, rejected, malformed, canceled, failed, output_rejected); retried attempts count too."},
			[]string{"server", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "livehat", Subsystem: "remote", Name: "request_seconds",
			Help:    "Duration of requests to model servers (a streamed answer until its end).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 6, 8, 12, 20, 60}}, []string{"server"}),
	}
	if err := reg.Register(m.attempts); err != nil {
		are, ok := err.(prometheus.AlreadyRegisteredError)
		if !ok {
			return nil, err
		}
		m.attempts = are.ExistingCollector.(*prometheus.CounterVec)
	}
	if err := reg.Register(m.seconds); err != nil {
		are, ok := err.(prometheus.AlreadyRegisteredError)
		if !ok {
			return nil, err
		}
		m.seconds = are.ExistingCollector.(*prometheus.HistogramVec)
	}
	return m, nil
}

// Observer returns a remote.Config.OnAttempt that counts a server's
// requests under the label server (a name the operator recognises, such as
// the URL's host; never a key). A nil RemoteMetrics returns nil, which
// observes nothing.
func (m *RemoteMetrics) Observer(server string) func(remote.Attempt) {
	if m == nil {
		return nil
	}
	return func(a remote.Attempt) {
		m.attempts.WithLabelValues(server, string(a.Kind)).Inc()
		m.seconds.WithLabelValues(server).Observe(a.Took.Seconds())
	}
}
