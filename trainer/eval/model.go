package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/model/chat"
	"github.com/livehat/livehat/model/engine"
	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// Model is a model opened from a spec, ready for the live-room suites
// (Factory) and for IFEval (Generate).
type Model struct {
	// Name is the spec it was opened from.
	Name string
	// Factory makes the runtime model for one case.
	Factory ModelFactory
	// Generate answers a plain prompt; nil for the expert, which only
	// plays the live room.
	Generate Generator
	close    func()
}

// ErrModelSpec is wrapped by the errors of OpenModel and OpenServer for a
// spec that names no model they can open.
var ErrModelSpec = errors.New("not a model")

// OpenServer opens an OpenAI-compatible server as a model: cfg.BaseURL is
// the server and cfg.Model the model to ask it for; cfg's timeouts and
// retries apply to every generation.
func OpenServer(cfg remote.Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("eval: %s: %w: name the model the server should answer with", cfg.BaseURL, ErrModelSpec)
	}
	client, err := remote.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Model{Name: cfg.BaseURL, Generate: remoteGenerator(client),
		Factory: func(Case) (runtime.Model, error) { return runtime.RemoteModel{Client: client}, nil }}, nil
}

// Close releases the model's engine, if it has one.
func (m *Model) Close() {
	if m.close != nil {
		m.close()
	}
}

// OpenModel opens a model from a spec: "bundled" (the repository's
// compact model, examples.Model), "expert" (the scripted live-room
// policy), "host" (the rule-based host, liveroom.Host), an http(s) URL of
// an OpenAI-compatible server (remoteModel names the model to ask it
// for), or a checkpoint folder.
func OpenModel(spec, remoteModel string) (*Model, error) {
	switch {
	case spec == "expert":
		return &Model{Name: spec, Factory: NewExpert}, nil
	case spec == "host":
		return &Model{Name: spec, Factory: func(Case) (runtime.Model, error) { return liveroom.Host{}, nil }}, nil
	case strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://"):
		return OpenServer(remote.Config{BaseURL: spec, Model: remoteModel})
	}
	dir := spec
	if spec == examples.ModelName {
		var err error
		if dir, err = examples.WriteModel(examples.ModelCacheDir()); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	} else if st, err := os.Stat(spec); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("eval: model %q: %w: want bundled, expert, host, an http(s) URL, or a checkpoint folder", spec, ErrModelSpec)
	}
	eng, err := engine.Load(dir, engine.Options{})
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	local := runtime.LocalModel{Engine: eng, Constrain: true}
	return &Model{
		Name:    spec,
		Factory: func(Case) (runtime.Model, error) { return local, nil },
		Generate: func(ctx context.Context, prompt string, maxTokens int) (string, error) {
			res, err := eng.Generate(ctx, engine.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: prompt}}, MaxTokens: maxTokens}, nil)
			return res.Content, err
		},
		close: func() { eng.Close() },
	}, nil
}
