package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/trainer/liveroom"
)

// TestEventStreamsHoldNoDatabaseConnection is part of finding 3 of issue
// #21: after a burst of SSE streams, hundreds of SQLite connections stayed
// open. The console's store is capped, and an open event stream holds no
// connection between its events.
func TestEventStreamsHoldNoDatabaseConnection(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	e.srv.cfg.Model, e.srv.cfg.ModelName = liveroom.Host{}, liveroom.HostModelName
	base := serveOnLoopback(t, e)
	const streams = 40
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: streams + 1}}
	var wg sync.WaitGroup
	opened := make(chan error, streams)
	for range streams {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/streams/"+e.demoStream+"/live/events", nil)
			req.Header.Set("Authorization", "Bearer "+e.merchant)
			resp, err := client.Do(req)
			if err != nil {
				opened <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				msg, _ := io.ReadAll(resp.Body)
				opened <- fmt.Errorf("events: %d %s", resp.StatusCode, msg)
				return
			}
			// The first event is the session's state: the stream is open.
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err == nil && !strings.HasPrefix(line, "retry:") {
				err = &unexpectedLine{line}
			}
			opened <- err
			<-ctx.Done()
		})
	}
	for range streams {
		if err := <-opened; err != nil {
			t.Fatal(err)
		}
	}
	st := e.store.Stats()
	if st.MaxOpenConnections != store.DefaultMaxConns || st.OpenConnections > store.DefaultMaxConns {
		t.Errorf("%d connections open, cap %d; want the store's cap of %d", st.OpenConnections, st.MaxOpenConnections, store.DefaultMaxConns)
	}
	if st.InUse != 0 {
		t.Errorf("%d connections in use while %d event streams wait for events, want none", st.InUse, streams)
	}
	cancel()
	wg.Wait()
}

type unexpectedLine struct{ line string }

func (u *unexpectedLine) Error() string { return "event stream began with " + u.line }
