package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBrowser drives the real console in headless Chromium: `livehat serve`
// runs in-process on a fresh data folder exactly as a user starts it, and
// node's test runner executes the Playwright specs in console/e2e against
// it. Screenshots of every page land in console/e2e/screenshots (or
// $LIVEHAT_SCREENSHOTS). It needs node, Chromium and the suite's npm
// packages; .ci/run installs them, and outside CI the test skips without them.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser suite: not in -short mode")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	var missing []string
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium+" (apt-get install chromium)")
	}
	if _, err := os.Stat("console/e2e/node_modules/playwright-core"); err != nil {
		missing = append(missing, "playwright-core (cd console/e2e && npm ci)")
	}
	if len(missing) > 0 {
		msg := "browser suite needs " + strings.Join(missing, ", ")
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "; .ci/run installs them")
		}
		t.Skip(msg)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const adminPW, merchantPW = "e2e-admin-password", "e2e-merchant-password"
	t.Setenv("LIVEHAT_ADMIN_PASSWORD", adminPW)
	t.Setenv("LIVEHAT_MERCHANT_PASSWORD", merchantPW)

	ctx, cancel := context.WithCancel(context.Background())
	var serverLog syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--data", t.TempDir(), "--log-level", "warn"}, strings.NewReader(""), &serverLog, &serverLog)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("server did not stop within 15 s")
		}
	}()
	base := "http://" + addr
	if err := waitReady(base+"/readyz", 3*time.Minute, done); err != nil {
		t.Fatalf("server did not become ready: %v\n%s", err, serverLog.String())
	}

	shots := os.Getenv("LIVEHAT_SCREENSHOTS")
	if shots == "" {
		shots, _ = filepath.Abs("console/e2e/screenshots")
	}
	cmd := exec.CommandContext(ctx, "node", "--test", "--test-concurrency=1", "--test-timeout=120000")
	cmd.Dir = "console/e2e"
	cmd.Env = append(os.Environ(), "LIVEHAT_URL="+base, "LIVEHAT_ADMIN_PASSWORD="+adminPW,
		"LIVEHAT_MERCHANT_PASSWORD="+merchantPW, "LIVEHAT_SCREENSHOTS="+shots, "CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("browser suite output:\n%s", out)
	if err != nil {
		t.Fatalf("browser suite failed: %v\nserver log:\n%s", err, serverLog.String())
	}
	t.Logf("screenshots in %s", shots)
}

func waitReady(url string, limit time.Duration, done <-chan int) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			return fmt.Errorf("serve exited with status %d", code)
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("no 200 from %s within %s", url, limit)
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
