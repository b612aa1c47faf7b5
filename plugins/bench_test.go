package plugins

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
)

// benchInput is a ~200-byte after_response hook input.
func benchInput(b *testing.B) []byte {
	in, err := json.Marshal(HookInput{Event: harness.EventAfterResponse, Stream: "demo-beauty-stream", Session: "s-42",
		Viewer: &Viewer{ID: "v-1001", Name: "小鹿"}, Text: "这款玻尿酸精华现在199元，原价299元，保湿效果很好，适合干皮和混合皮。", ReplyChars: 120})
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// timed runs fn b.N times and reports p50 and p99 besides the mean, and
// the process CPU time per call (steadier than wall time when other
// work shares the machine).
func timed(b *testing.B, fn func() error) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		start := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// benchExample loads an example with a long deadline: benchmarks
// measure speed, and a loaded machine must not turn into failed calls.
func benchExample(b *testing.B, h *Host, dir string, instances int) *Plugin {
	b.Helper()
	m, _, err := ReadManifestDir("../examples/plugins/" + dir)
	if err != nil {
		b.Fatal(err)
	}
	m.Limits.TimeoutMS = 10000
	if instances > 0 {
		m.Limits.Instances = instances
	}
	return load(b, h, m, guestWasm(b, "example/"+dir))
}

// BenchmarkHostOverhead is the host's own cost per call: an empty guest
// export (edge.wat "allow": 5 host calls to write the decision) through
// the full path: pool checkout, deadline, input and output copies,
// decision decoding and validation.
func BenchmarkHostOverhead(b *testing.B) {
	for _, c := range []struct {
		name  string
		trust bool
	}{{"close-on-done", false}, {"trusted-no-close-on-done", true}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := NewHostConfig()
			cfg.noCloseOnDone = c.trust
			h := newTestHost(b, cfg)
			p := load(b, h, edgeManifest(), watWasm(b, "edge"))
			in := benchInput(b)
			ctx := context.Background()
			timed(b, func() error {
				d, err := p.Hook(ctx, nil, "allow", in)
				if err == nil && d.Action != harness.ActionAllow {
					b.Fatalf("decision %+v", d)
				}
				return err
			})
		})
	}
}

// BenchmarkGoHook is a standard-Go hook doing real work with deadlines
// on: the speech-length example (clean, shorten, segment a reply) and
// the compliance example (three catalog lookups, claims and prices).
// Compare with the native benchmarks of the examples for the ratio. The
// trusted variants show the price of close-on-context-done, which the
// host never turns off for real plugins.
func BenchmarkGoHook(b *testing.B) {
	env := demoEnv(b, nil)
	in := benchInput(b)
	ctx := context.Background()
	for _, c := range []struct {
		dir, hook string
		trusted   bool
	}{{"speech", "fit_speech", false}, {"compliance", "check_reply", false},
		{"speech", "fit_speech", true}, {"compliance", "check_reply", true}} {
		name := c.dir
		if c.trusted {
			name += "/trusted-no-close-on-done"
		}
		b.Run(name, func(b *testing.B) {
			cfg := NewHostConfig()
			cfg.noCloseOnDone = c.trusted
			p := benchExample(b, newTestHost(b, cfg), c.dir, 0)
			timed(b, func() error {
				_, err := p.Hook(ctx, env, c.hook, in)
				return err
			})
		})
	}
}

// BenchmarkPoolThroughput is calls per second of the speech hook from
// parallel callers over a pool of instances.
func BenchmarkPoolThroughput(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(map[int]string{1: "instances=1", 2: "instances=2", 4: "instances=4"}[n], func(b *testing.B) {
			h := newTestHost(b, NewHostConfig().WithPrewarm(n))
			p := benchExample(b, h, "speech", n)
			in := benchInput(b)
			ctx := context.Background()
			b.SetParallelism(n)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := p.Hook(ctx, nil, "fit_speech", in); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
	}
}

// BenchmarkInstantiate is the cost of one fresh instance of a standard-Go
// plugin (what a discard or a pool miss pays), with its linear memory
// and the host heap it adds.
func BenchmarkInstantiate(b *testing.B) {
	h := newTestHost(b, NewHostConfig())
	p := benchExample(b, h, "shop", 0)
	ctx := context.Background()
	var mem uint32
	timed(b, func() error {
		probe, err := p.ProbeInstance(ctx)
		mem = probe.MemoryBytes
		return err
	})
	b.ReportMetric(float64(mem)/(1<<20), "linear-MiB")
}

// BenchmarkInstanceMemory reports the host heap and linear memory of
// idle instances of a standard-Go plugin, and the linear memory after
// 2000 calls (standard-Go guests grow and never shrink).
func BenchmarkInstanceMemory(b *testing.B) {
	const n = 8
	for range b.N {
		h := newTestHost(b, NewHostConfig().WithPrewarm(0))
		p := benchExample(b, h, "speech", n)
		ctx := context.Background()
		in := benchInput(b)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		done := make(chan struct{})
		for range n { // n concurrent calls make the pool start n instances
			go func() {
				defer func() { done <- struct{}{} }()
				if _, err := p.Hook(ctx, nil, "fit_speech", in); err != nil {
					b.Error(err)
				}
			}()
		}
		for range n {
			<-done
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n/(1<<20), "heap-MiB/instance")
		probe, err := p.ProbeInstance(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(probe.MemoryBytes)/(1<<20), "linear-MiB/instance")
		long := strings.Repeat("这款面霜修护屏障，适合敏感肌。", 30)
		one, _ := json.Marshal(HookInput{Event: harness.EventAfterResponse, Text: long})
		single := benchExample(b, h, "speech", 1)
		for range 2000 {
			if _, err := single.Hook(ctx, nil, "fit_speech", one); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(single.Stats().PeakMemoryBytes)/(1<<20), "linear-MiB-after-2000-calls")
	}
}

// BenchmarkTurnPlugins is the plugin work of one live turn in the demo
// harness: the viewer_message hook, one tool call, and the two
// after_response hooks. Divide by the turn's end-to-end time for the
// share of a turn spent in plugins.
func BenchmarkTurnPlugins(b *testing.B) {
	h := newTestHost(b, NewHostConfig())
	env := demoEnv(b, nil)
	mod, shop, comp, speech := benchExample(b, h, "moderation", 0), benchExample(b, h, "shop", 0),
		benchExample(b, h, "compliance", 0), benchExample(b, h, "speech", 0)
	ctx := context.Background()
	reply := benchInput(b)
	i := 0
	timed(b, func() error {
		i++
		msg, _ := json.Marshal(HookInput{Event: harness.EventViewerMessage, Viewer: &Viewer{ID: "v-" + string(rune('a'+i%26))},
			Text: "这个精华多少钱？适合干皮吗"})
		if _, err := mod.Hook(ctx, env, "screen_message", msg); err != nil {
			return err
		}
		if _, err := shop.Tool(ctx, env, "lookup_product", []byte(`{"name":"精华"}`)); err != nil {
			return err
		}
		if _, err := comp.Hook(ctx, env, "check_reply", reply); err != nil {
			return err
		}
		_, err := speech.Hook(ctx, env, "fit_speech", reply)
		return err
	})
}

// BenchmarkCompile is a cold compile of a standard-Go plugin (no cache):
// what an install pays once per module version and machine.
func BenchmarkCompile(b *testing.B) {
	wasm := guestWasm(b, "example/shop")
	m, _, err := ReadManifestDir("../examples/plugins/shop")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		h, err := NewHost(ctx, NewHostConfig().WithPrewarm(0))
		if err != nil {
			b.Fatal(err)
		}
		p, err := loadErr(h, m, wasm)
		if err != nil {
			b.Fatal(err)
		}
		p.Close(ctx)
		h.Close(ctx)
	}
}
