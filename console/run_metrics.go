package console

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// maxTailRead bounds one read of a metrics file (a long run's history is
// read over several calls).
const maxTailRead = 4 << 20

// metricsTail reads the lines a run appends to its metrics.jsonl, one
// complete line at a time: a line the trainer is still writing waits for
// its newline.
type metricsTail struct {
	path    string
	off     int64
	partial []byte
}

// next returns the complete lines written since the last call. reset
// reports that the file shrank (a resumed run drops the steps after its
// checkpoint), in which case the lines start again from the top. A file
// that does not exist yet has no lines.
func (m *metricsTail) next() (lines [][]byte, reset bool, err error) {
	f, err := os.Open(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("metrics: %w", err)
	}
	if fi.Size() < m.off {
		m.off, m.partial, reset = 0, nil, true
	}
	if fi.Size() == m.off {
		return nil, reset, nil
	}
	if _, err := f.Seek(m.off, io.SeekStart); err != nil {
		return nil, reset, fmt.Errorf("metrics: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTailRead))
	if err != nil {
		return nil, reset, fmt.Errorf("metrics: %w", err)
	}
	m.off += int64(len(data))
	data = append(m.partial, data...)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		m.partial = data
		return nil, reset, nil
	}
	m.partial = append([]byte(nil), data[end+1:]...)
	for _, l := range bytes.Split(data[:end], []byte{'\n'}) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines, reset, nil
}

// trainingGauges are the training series on /metrics, one per run: the
// last step, its loss and its throughput.
type trainingGauges struct {
	step, loss, tokensPerSec *prometheus.GaugeVec
}

// newTrainingGauges registers the gauges on reg; nil when reg is nil. A
// gauge another server already registered on reg is shared.
func newTrainingGauges(reg *prometheus.Registry, log *slog.Logger) *trainingGauges {
	if reg == nil {
		return nil
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"run"})
		if err := reg.Register(g); err != nil {
			var dup prometheus.AlreadyRegisteredError
			if errors.As(err, &dup) {
				if existing, ok := dup.ExistingCollector.(*prometheus.GaugeVec); ok {
					return existing
				}
			}
			log.Error("registering a training gauge", "name", name, "err", err)
		}
		return g
	}
	return &trainingGauges{
		step:         gauge("livehat_training_step", "Last optimizer step a training run reported."),
		loss:         gauge("livehat_training_loss", "Training loss at a run's last reported step."),
		tokensPerSec: gauge("livehat_training_tokens_per_second", "Training throughput at a run's last reported step, in tokens per second."),
	}
}

// observe records a run's latest metrics line.
func (g *trainingGauges) observe(run string, m runfolder.Metrics) {
	if g == nil {
		return
	}
	g.step.WithLabelValues(run).Set(float64(m.Step))
	g.loss.WithLabelValues(run).Set(m.Loss)
	g.tokensPerSec.WithLabelValues(run).Set(m.TokensPerSec)
}
