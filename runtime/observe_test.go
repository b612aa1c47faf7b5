package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
)

// TestObserveFiresSignalRule: price questions the session only observes
// (another session of the room answers them) fire its price-question rule,
// and none of them is queued or answered: the one turn is the narration.
func TestObserveFiresSignalRule(t *testing.T) {
	s := startSession(t, Config{Plugins: newPlugins(), Model: priceModel("A 20 yuan coupon is live now!")})
	ev := s.Listen(256)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		n, _ := s.RunStrategy(ctx, Strategy{Rules: []StrategyRule{{
			Name: "coupon_on_price_questions", Signal: "price_questions", Threshold: 3, Window: time.Minute, Cooldown: time.Hour,
			Instruction: "Many viewers ask about price: announce the active coupon.",
		}}}, 10*time.Millisecond)
		done <- n
	}()
	for i, q := range []string{"how much is the serum", "价格多少", "hello everyone", "cream price?"} {
		if err := s.Observe(Message{Viewer: fmt.Sprintf("v%d", i), Text: q}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Kind != EventTurn {
				continue
			}
			if e.Record.Event != harness.EventNarrationTick {
				t.Fatalf("an observed message was answered: %+v", e.Record)
			}
			if !strings.Contains(e.Record.Input, "announce the active coupon") {
				t.Errorf("narration turn = %+v", e.Record)
			}
			cancel()
			if n := <-done; n != 1 {
				t.Errorf("rule fired %d times, want 1", n)
			}
			if st := s.QueueStats(); st.Submitted != 1 || st.Started != 1 {
				t.Errorf("queue stats = %+v, want only the narration submitted and started", st)
			}
			return
		case <-deadline:
			t.Fatal("no narration within 10 s of three observed price questions")
		}
	}
}

// TestObserveBelowThreshold: two observed price questions (and chit-chat)
// stay under a threshold of three; the counts are the signals' values.
func TestObserveBelowThreshold(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := startSession(t, Config{Plugins: newPlugins(), Model: priceModel("ok"), Now: func() time.Time { return now }})
	for _, q := range []string{"price?", "nice colour", "any coupon?"} {
		if err := s.Observe(Message{Viewer: "v", Text: q}); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.signal("price_questions", now, time.Minute); got != 2 {
		t.Errorf("price_questions = %v, want 2", got)
	}
	if got := s.signal("messages", now, time.Minute); got != 3 {
		t.Errorf("messages = %v, want 3", got)
	}
	// An observed message keeps its own time: one of two minutes ago is
	// outside a one-minute window.
	if err := s.Observe(Message{Viewer: "v", Text: "how much?", At: now.Add(-2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got := s.signal("price_questions", now, time.Minute); got != 2 {
		t.Errorf("price_questions with an old message = %v, want 2", got)
	}
	if st := s.QueueStats(); st.Submitted != 0 || st.Queued != 0 {
		t.Errorf("queue stats after observing = %+v, want nothing queued", st)
	}
}

// TestObserveRejectsUnusable: what Submit would refuse is not counted.
func TestObserveRejectsUnusable(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := startSession(t, Config{Plugins: newPlugins(), Model: priceModel("ok"), Now: func() time.Time { return now }})
	for _, text := range []string{"  ", strings.Repeat("price ", 1000), "price\x00", "price \xff"} {
		if err := s.Observe(Message{Viewer: "v", Text: text}); err == nil {
			t.Errorf("Observe(%.20q) accepted", text)
		}
	}
	if got := s.signal("messages", now, time.Minute); got != 0 {
		t.Errorf("messages after unusable ones = %v, want 0", got)
	}
}

// TestObserveConcurrentWithSubmit: observing and submitting from many
// goroutines count every message once (run with -race).
func TestObserveConcurrentWithSubmit(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := startSession(t, Config{Plugins: newPlugins(), Model: priceModel("199 yuan."), Now: func() time.Time { return now },
		Queue: QueueConfig{Capacity: 1000}})
	var wg sync.WaitGroup
	const each = 25
	for g := range 4 {
		wg.Go(func() {
			for i := range each {
				m := Message{Viewer: fmt.Sprintf("g%d-%d", g, i), Text: "serum price?"}
				var err error
				if g%2 == 0 {
					err = s.Observe(m)
				} else {
					err = s.Submit(m)
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := s.signal("price_questions", now, time.Minute); got != 4*each {
		t.Errorf("price_questions = %v, want %d", got, 4*each)
	}
	if st := s.QueueStats(); st.Submitted != 2*each {
		t.Errorf("submitted = %d, want %d (observed messages are not queued)", st.Submitted, 2*each)
	}
}
