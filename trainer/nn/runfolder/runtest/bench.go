package runtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// MeasureRun times run — a training run of b.N steps that writes its
// metrics to the run folder out — as the benchmark's work, and reports
// the tokens its metrics count per second of wall time and of CPU time,
// with the tokens and trained (sampled) tokens per step.
func MeasureRun(b *testing.B, out string, run func() error) {
	b.Helper()
	b.ResetTimer()
	cpu0, _ := CPUTime()
	if err := run(); err != nil {
		b.Fatal(err)
	}
	cpu1, ok := CPUTime()
	b.StopTimer()
	data, err := os.ReadFile(filepath.Join(out, runfolder.MetricsFile))
	if err != nil {
		b.Fatal(err)
	}
	tokens, trained := 0, 0
	for line := range bytes.SplitSeq(bytes.TrimSpace(data), []byte("\n")) {
		var m runfolder.Metrics
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
		tokens += m.Tokens
		trained += m.TrainedTokens
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
	if ok {
		b.ReportMetric(float64(tokens)/(cpu1-cpu0).Seconds(), "tokens/cpu-s")
	}
	b.ReportMetric(float64(tokens)/float64(b.N), "tokens/step")
	b.ReportMetric(float64(trained)/float64(b.N), "trained-tokens/step")
}
