package command

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jsonLines decodes every line of data as a JSON object.
func jsonLines(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var row map[string]any
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatalf("line %d: %v: %.200s", i+1, err, line)
		}
		out = append(out, row)
	}
	return out
}

func TestExportTrajectories(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "sft.jsonl")
	var stdout, stderr bytes.Buffer
	if err := Export(ctx, []string{"--format", "verl", "--out", file, "--rooms", "2", "--questions", "3", "--augment=false"}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rows := jsonLines(t, data)
	for _, row := range rows {
		if row["messages"] == nil || row["hsa_record"] != nil {
			t.Fatalf("fixed-harness verl row: %.300v", row)
		}
	}
	if !strings.HasPrefix(stderr.String(), "export: ") || !strings.Contains(stderr.String(), " to "+file) || stdout.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}

	// --out - writes the lines to standard output and no summary.
	stdout.Reset()
	stderr.Reset()
	if err := Export(ctx, []string{"--format", "trl", "--out", "-", "--rooms", "2", "--questions", "3"}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if len(jsonLines(t, stdout.Bytes())) == 0 || strings.Contains(stderr.String(), "export:") {
		t.Errorf("stdout %d bytes, stderr %q", stdout.Len(), stderr.String())
	}
}

// TestExportRLPrompts: the RL formats go to the RL exporter.
func TestExportRLPrompts(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "rl.jsonl")
	var stdout, stderr bytes.Buffer
	if err := Export(ctx, []string{"--format=verl-rl", "--out", file, "--tasks", "3"}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	rows := jsonLines(t, data)
	if len(rows) != 3 || rows[0]["reward_model"] == nil {
		t.Errorf("verl-rl export: %.300s", data)
	}
	if !strings.Contains(stderr.String(), "export: 3 RL prompts") {
		t.Errorf("stderr %q", stderr.String())
	}
	stdout.Reset()
	if err := Export(ctx, []string{"--format", "trl-rl", "--out", "-", "--tasks", "5", "--rooms", "3"}, nil, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if rows := jsonLines(t, stdout.Bytes()); len(rows) != 5 || rows[0]["prompt"] == nil {
		t.Errorf("trl-rl to standard output: %.300s", stdout.String())
	}
}

func TestExportUsageErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.jsonl")
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"unknown format", []string{"--format", "csv", "--out", file}},
		{"no out", []string{"--format", "trl"}},
		{"unknown flag", []string{"--bogus"}},
		{"extra argument", []string{"--out", file, "extra"}},
		{"rl without out", []string{"--format", "verl-rl"}},
		{"rl no tasks", []string{"--format", "verl-rl", "--out", file, "--tasks", "0"}},
		{"rl unknown flag", []string{"--format", "trl-rl", "--out", file, "--questions", "3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := Export(context.Background(), tt.args, nil, io.Discard, io.Discard); !IsUsage(err) {
				t.Errorf("Export(%q) = %v, want a usage error", tt.args, err)
			}
		})
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a refused command line wrote its --out file")
	}
}
