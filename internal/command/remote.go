package command

import (
	"flag"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
)

// remoteFlags point a command's --model at an OpenAI-compatible server
// (vLLM, SGLang, Ollama, llama.cpp's llama-server, a hosted API).
type remoteFlags struct {
	name, keyEnv  string
	timeout, idle time.Duration
	concurrency   int
	retries       int
}

// addRemoteFlags defines the flags on fs. The API key is read from an
// environment variable, never a flag, so it does not show in ps or in
// shell history.
func addRemoteFlags(fs *flag.FlagSet) *remoteFlags {
	f := &remoteFlags{}
	fs.StringVar(&f.name, "model-name", "", "with a --model URL: the model name to ask the server for (required)")
	fs.StringVar(&f.keyEnv, "api-key-env", "LIVEHAT_MODEL_API_KEY", "with a --model URL: the environment `variable` holding the server's API key (unset: no key)")
	fs.DurationVar(&f.timeout, "model-timeout", 0, "with a --model URL: how long to wait for the server's response headers (0: 60s)")
	fs.DurationVar(&f.idle, "model-idle-timeout", 0, "with a --model URL: the longest silence within a streamed answer (0: 60s)")
	fs.IntVar(&f.concurrency, "model-concurrency", 0, "with a --model URL: requests in flight at once (0: no bound)")
	fs.IntVar(&f.retries, "model-retries", 0, "with a --model URL: retries after a 429, a 5xx or a failed connection (0: 2, -1: none)")
	return f
}

// isServerURL reports whether a --model value names a server rather than
// a checkpoint folder.
func isServerURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// open returns the server at rawURL as a live session's model and the name
// turns give it (the model at the URL's host; the key is never part of
// it). metrics, when set, counts the server's requests.
func (f *remoteFlags) open(rawURL string, metrics *runtime.RemoteMetrics) (runtime.RemoteModel, string, error) {
	if f.name == "" {
		return runtime.RemoteModel{}, "", usagef("--model %s is a server: name its model with --model-name", rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return runtime.RemoteModel{}, "", usagef("--model %q is not a server URL", rawURL)
	}
	if u.User != nil {
		return runtime.RemoteModel{}, "", usagef("--model: put the API key in the variable --api-key-env names, not in the URL")
	}
	name := f.name + " at " + u.Host
	cfg := remote.Config{BaseURL: rawURL, Model: f.name, Timeout: f.timeout, StreamIdleTimeout: f.idle,
		MaxConcurrent: f.concurrency, MaxRetries: f.retries, OnAttempt: metrics.Observer(name)}
	if f.keyEnv != "" {
		cfg.APIKey = os.Getenv(f.keyEnv)
	}
	c, err := remote.New(cfg)
	if err != nil {
		return runtime.RemoteModel{}, "", usagef("--model: %v", err)
	}
	return runtime.RemoteModel{Client: c}, name, nil
}
