// Package runtest checks the resume guarantee of training stages the way
// their tests do: a real run is killed with SIGKILL after a checkpoint,
// resumed, and compared byte for byte with an uninterrupted run.
package runtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/livehat/livehat/trainer/nn/runfolder"
)

// KillAfterCheckpoint runs the test binary's test named helper in a child
// process with the extra environment env, waits until the run folder out
// holds a checkpoint at step 2 or later, kills the child with SIGKILL and
// waits for it. It fails t when the run ends on its own, writes no
// checkpoint within two minutes, or reaches its last step (steps) first.
func KillAfterCheckpoint(t testing.TB, out string, steps int, helper string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$")
	cmd.Env = append(os.Environ(), env...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if st, err := runfolder.ReadState(out); err == nil && st.Step >= 2 {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the helper run ended before it was killed:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the helper run wrote no checkpoint")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	st, err := runfolder.ReadState(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Step >= steps {
		t.Fatalf("the run finished (step %d) before it was killed", st.Step)
	}
	t.Logf("killed at step %d of %d", st.Step, steps)
}

// SameRun fails t unless the run folders a and b end with byte-identical
// weights and optimizer state and hold steps metric lines each.
func SameRun(t testing.TB, a, b string, steps int) {
	t.Helper()
	for _, f := range []string{"model.safetensors", runfolder.OptimizerFile} {
		x, err := os.ReadFile(filepath.Join(a, runfolder.CheckpointDir, f))
		if err != nil {
			t.Fatal(err)
		}
		y, _ := os.ReadFile(filepath.Join(b, runfolder.CheckpointDir, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s after kill and resume differs from the uninterrupted run", f)
		}
	}
	ma, _ := os.ReadFile(filepath.Join(a, runfolder.MetricsFile))
	mb, _ := os.ReadFile(filepath.Join(b, runfolder.MetricsFile))
	if bytes.Count(ma, []byte("\n")) != steps || bytes.Count(mb, []byte("\n")) != steps {
		t.Errorf("metrics: %d and %d lines, want %d each", bytes.Count(ma, []byte("\n")), bytes.Count(mb, []byte("\n")), steps)
	}
}
