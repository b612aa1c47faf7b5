package tokenizer

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time used by the process so far. The benchmark machine is
// shared, so wall-clock MB/s varies with other load; MB per CPU-second does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loopMBps runs fn b.N times over size bytes and reports MB per CPU-second.
func loopMBps(b *testing.B, size int, fn func()) {
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := cpuTime()
	n := 0
	for b.Loop() {
		fn()
		n++
	}
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(n*size)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
}

// mixedText joins the 400 reference inputs (Chinese, English, Korean,
// Japanese, emoji, digits, code, chat markup) into one text of ~30 KB.
func mixedText(b *testing.B) string {
	var sb strings.Builder
	for _, r := range readReference(b) {
		sb.WriteString(r.Text)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// BenchmarkEncodeMixed measures one-core encode throughput on mixed zh/en text
// with the word cache warm, as in a long-running server.
func BenchmarkEncodeMixed(b *testing.B) {
	tok := loadQwen3(b)
	text := mixedText(b)
	loopMBps(b, len(text), func() { tok.EncodeWithSpecial(text) })
}

// BenchmarkEncodeMixedNoCache is the same text with the word cache disabled:
// every piece goes through the BPE merge loop.
func BenchmarkEncodeMixedNoCache(b *testing.B) {
	tok := loadQwen3(b)
	text := mixedText(b)
	saved := tok.cache
	tok.cache = nil
	defer func() { tok.cache = saved }()
	loopMBps(b, len(text), func() { tok.EncodeWithSpecial(text) })
}

// BenchmarkDecodeMixed measures decoding the ids of the mixed text.
func BenchmarkDecodeMixed(b *testing.B) {
	tok := loadQwen3(b)
	text := mixedText(b)
	ids := tok.EncodeWithSpecial(text)
	loopMBps(b, len(text), func() { tok.Decode(ids) })
}

// BenchmarkLoadQwen3 measures parsing the 11 MB Qwen3 tokenizer.json.
func BenchmarkLoadQwen3(b *testing.B) {
	dir := sharedQwen3(b)
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrain trains an 8,000-token vocabulary on 1 MB of text made by
// decoding random Qwen3 token sequences (skewed towards frequent low ids), so
// that the corpus has many distinct words in many scripts.
func BenchmarkTrain(b *testing.B) {
	qwen := loadQwen3(b)
	rng := rand.New(rand.NewPCG(7, 7))
	var corpus []string
	size := 0
	for size < 1<<20 {
		ids := make([]int, 5+rng.IntN(35))
		for i := range ids {
			ids[i] = int(float64(151643) * math.Pow(rng.Float64(), 4))
		}
		s := qwen.Decode(ids)
		corpus = append(corpus, s)
		size += len(s)
	}
	loopMBps(b, size, func() {
		if _, err := Train(context.Background(), slices.Values(corpus), TrainConfig{VocabSize: 8000, MinFrequency: 2}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkEncodeMixedParallel encodes from GOMAXPROCS goroutines sharing one
// Tokenizer (and its word cache): total MB/s across goroutines.
func BenchmarkEncodeMixedParallel(b *testing.B) {
	tok := loadQwen3(b)
	text := mixedText(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tok.EncodeWithSpecial(text)
		}
	})
}
