package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/livehat/livehat/console"
	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// Serve is "livehat serve": it starts the console on the embedded
// defaults: the demo stream's harness, plus any harness files named with
// --harness.
func Serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8080", "listen address")
	dataDir := fs.String("data", "livehat-data", "data `folder`: the SQLite database and uploaded plugins")
	insecure := fs.Bool("insecure-cookies", false, "send the session cookie without Secure (plain HTTP on a host other than localhost)")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	modelArg := fs.String("model", examples.ModelName, "the model live sessions answer with: bundled (the repository's compact HAT model), host (the rule-based host, no weights), a checkpoint folder, or an OpenAI-compatible server's URL (with --model-name)")
	remoteOpts := addRemoteFlags(fs)
	var extra stringList
	fs.Var(&extra, "harness", "harness `file` to serve besides the demo (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve takes no arguments, got %q", fs.Args())
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", *level)
	}
	log := newLogger(stderr, lvl)

	demo, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		return fmt.Errorf("embedded demo harness: %w", err)
	}
	hs := []*harness.Harness{demo}
	for _, path := range extra {
		h, err := harness.Load(path)
		if err != nil {
			return err
		}
		hs = append(hs, h)
	}
	for _, h := range hs {
		log.Info("harness loaded", "name", h.Name, "version", h.ShortVersion())
	}
	// The model is opened before the data folder is touched, so a bad
	// --model fails before first-run setup.
	reg := prometheus.NewRegistry()
	liveModel, modelName, closeModel, err := openLiveModel(*modelArg, *dataDir, remoteOpts, reg)
	if err != nil {
		return err
	}
	defer closeModel()
	log.Info("model loaded", "model", modelName)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	st, err := console.OpenStore(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	demoSeed := console.Demo{AdminPassword: os.Getenv("LIVEHAT_ADMIN_PASSWORD"), MerchantPassword: os.Getenv("LIVEHAT_MERCHANT_PASSWORD"),
		Catalog: examples.Catalog, HarnessVersion: demo.Version()}
	if err := console.Bootstrap(ctx, st, demoSeed, stdout); err != nil {
		return fmt.Errorf("first-run setup: %w", err)
	}
	sandbox, err := runtime.OpenSandbox(ctx, "", log)
	if err != nil {
		return err
	}
	defer sandbox.Close(context.Background())
	_, pluginDirs, err := demoWithHooks()
	if err != nil {
		log.Warn("example plugins not installed", "err", err)
	}
	srv, err := console.New(console.Config{Logger: log, Store: st, Harnesses: hs, Metrics: reg, InsecureCookies: *insecure,
		DataDir: *dataDir, Sandbox: sandbox, PluginDirs: pluginDirs, Model: liveModel, ModelName: modelName})
	if err != nil {
		return err
	}
	// The demo harness's tools and hooks are these plugins: without them
	// its compliance hook fails closed and every turn ends on the safe line.
	if err := srv.InstallExamples(ctx); err != nil {
		log.Warn("example plugins", "err", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	fmt.Fprintf(stdout, "LiveHAT console: %s (data in %s)\n", displayURL(ln.Addr()), *dataDir)
	return srv.Serve(ctx, ln)
}

// openLiveModel opens the model named by serve's --model: the bundled
// model (written once into the data folder, where the engine reads it),
// the rule-based host, a checkpoint folder, served with tool calls
// constrained to their schemas, as the console serves promoted checkpoints,
// or a model server (its requests counted on reg's /metrics).
func openLiveModel(arg, dataDir string, server *remoteFlags, reg prometheus.Registerer) (runtime.Model, string, func(), error) {
	if isServerURL(arg) {
		metrics, err := runtime.NewRemoteMetrics(reg)
		if err != nil {
			return nil, "", nil, err
		}
		m, name, err := server.open(arg, metrics)
		return m, name, func() {}, err
	}
	dir := arg
	switch arg {
	case "host":
		return liveroom.Host{}, liveroom.HostModelName, func() {}, nil
	case examples.ModelName:
		var err error
		if dir, err = examples.WriteModel(filepath.Join(dataDir, "bundled")); err != nil {
			return nil, "", nil, err
		}
	}
	eng, err := engine.Load(dir, engine.Options{})
	if err != nil {
		return nil, "", nil, fmt.Errorf("--model %s: %w", arg, err)
	}
	name := arg
	if arg == examples.ModelName {
		name = examples.ModelDescription
	}
	return runtime.LocalModel{Engine: eng, Constrain: true}, name, func() { eng.Close() }, nil
}

// displayURL is the address to open in a browser: a wildcard listen
// address is shown as localhost.
func displayURL(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return fmt.Sprintf("http://localhost:%d", tcp.Port)
	}
	return "http://" + a.String()
}

// newLogger returns the structured logger of the server.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
