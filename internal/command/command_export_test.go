package command

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/model/gguf"
)

// readGGUF opens a GGUF file written by export gguf.
func readGGUF(t *testing.T, path string) *gguf.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(fh, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestExportGGUF(t *testing.T) {
	dir, err := examples.WriteModel(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "bundled.gguf")
	var stdout, stderr bytes.Buffer
	if err := ExportGGUF(ctx, []string{"--checkpoint", dir, "--out", out, "--type", "q8_0"}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err, stderr.String())
	}
	if info, _ := readGGUF(t, out).Tensor("blk.0.ffn_up.weight"); info.Type != gguf.Q8_0 {
		t.Errorf("ffn_up exported as %s, want Q8_0", info.Type)
	}
	if !strings.HasPrefix(stdout.String(), "wrote "+out+" (") {
		t.Errorf("stdout %q", stdout.String())
	}

	own := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(own, []byte("{{ bos_token }}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ExportGGUF(ctx, []string{"--checkpoint", dir, "--out", out, "--chat-template", own}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if got, _ := readGGUF(t, out).Value("tokenizer.chat_template"); got != "{{ bos_token }}" {
		t.Errorf("--chat-template gave %q", got)
	}

	empty := filepath.Join(t.TempDir(), "empty.jinja")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"--checkpoint", dir}, "need --checkpoint DIR and --out FILE"},
		{"stray argument", []string{"--checkpoint", dir, "--out", out, "extra"}, "no other arguments"},
		{"unknown type", []string{"--checkpoint", dir, "--out", out, "--type", "q4"}, `unknown --type "q4"`},
		{"missing template", []string{"--checkpoint", dir, "--out", out, "--chat-template", filepath.Join(dir, "none")}, "--chat-template"},
		{"empty template", []string{"--checkpoint", dir, "--out", out, "--chat-template", empty}, "is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := ExportGGUF(ctx, tt.args, nil, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
}
