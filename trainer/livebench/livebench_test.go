package livebench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/livehat/livehat/examples"
	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/runtime"
)

// TestRunAccountsForEveryMessage plays two rooms for a few seconds with a
// random tiny model and the example hooks, one question a turn and then
// up to four: every message sent must be answered (or given the safe
// line), denied as spam, shed or dropped as stale, and latencies and load
// must be measured.
func TestRunAccountsForEveryMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	ctx := context.Background()
	h, err := harness.LoadFS(examples.Harnesses, examples.DemoHarness)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := runtime.OpenSandbox(ctx, filepath.Join(os.TempDir(), "livehat-test-plugin-cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	sb.SetTimeoutFloor(5 * time.Second)
	for _, p := range []string{"storefront", "moderation", "compliance", "speech"} {
		if _, err := sb.LoadGoDir(ctx, filepath.Join("..", "..", "examples", "plugins", p)); err != nil {
			t.Fatal(err)
		}
	}
	m, closeModel, err := openModel("random:tiny", "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeModel()
	for _, batch := range []int{1, 4} {
		rep, err := Run(ctx, Config{Harness: h, Model: m, Sandbox: sb, Streams: 2, Rate: 2, Duration: 3 * time.Second, MaxTokens: 8, Seed: 3, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sent == 0 {
			t.Fatal("no messages sent")
		}
		accounted := rep.Answered + rep.SafeLines + rep.Denied + rep.Shed + rep.Stale + rep.Closed
		if accounted != rep.Sent {
			t.Errorf("batch %d: %d messages sent but %d accounted for: %+v", batch, rep.Sent, accounted, rep)
		}
		if rep.Total.P50 <= 0 || rep.FirstChunk.P50 <= 0 || rep.Model.P50 <= 0 || rep.Busy <= 0 {
			t.Errorf("batch %d: latencies or load not measured: %+v", batch, rep)
		}
		if batch == 1 && rep.Batched != 0 {
			t.Errorf("batch 1: %d questions batched", rep.Batched)
		}
	}
}
