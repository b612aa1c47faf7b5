package command

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestOpenLiveModelServer(t *testing.T) {
	tests := []struct {
		name string
		args []string
		url  string
		want string // the model's name, or the error's text
	}{
		{"named", []string{"--model-name", "qwen3"}, "http://10.0.0.5:8000/v1", "qwen3 at 10.0.0.5:8000"},
		{"no name", nil, "http://10.0.0.5:8000", "--model-name"},
		{"key in the URL", []string{"--model-name", "q"}, "http://user:sk-1@10.0.0.5:8000", "not in the URL"},
		{"negative concurrency", []string{"--model-name", "q", "--model-concurrency", "-2"}, "http://h:1", "MaxConcurrent -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			opts := addRemoteFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			_, name, closeModel, err := openLiveModel(tt.url, t.TempDir(), opts, prometheus.NewRegistry())
			if err != nil {
				if !strings.Contains(err.Error(), tt.want) || !IsUsage(err) {
					t.Fatalf("err = %v, want a usage error naming %q", err, tt.want)
				}
				return
			}
			defer closeModel()
			if name != tt.want {
				t.Errorf("name = %q, want %q", name, tt.want)
			}
		})
	}
}
