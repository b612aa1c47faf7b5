package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestQueuePriorityMergeShedStale(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	q := newMessageQueue(QueueConfig{Capacity: 3, StaleAfter: 30 * time.Second}, clock.now)
	push := func(v, text string) []dropped { return q.push(Message{Viewer: v, Text: text, At: clock.now()}) }
	push("a", "主播好漂亮")                  // chat
	push("b", "How much is the serum?") // product
	push("c", "how much is the serum")  // duplicate of b: merged
	push("d", "链接在哪")                   // purchase
	if d := push("e", "hello everyone"); len(d) != 1 || d[0].msg.Viewer != "a" || !strings.HasPrefix(d[0].reason, "shed:") {
		t.Fatalf("shed = %+v, want the oldest chat message", d)
	}
	ctx := context.Background()
	in, _, _ := q.pop(ctx)
	if in.priority != PriorityProduct || strings.Join(in.viewers, ",") != "b,c" {
		t.Errorf("first = %v %v, want the merged product question", in.priority, in.viewers)
	}
	in, _, _ = q.pop(ctx)
	if in.priority != PriorityPurchase {
		t.Errorf("second = %v, want purchase", in.priority)
	}
	clock.advance(31 * time.Second)
	push("f", "What size should I get?")
	in, drops, _ := q.pop(ctx)
	if len(drops) != 1 || drops[0].msg.Viewer != "e" || !strings.HasPrefix(drops[0].reason, "stale:") {
		t.Errorf("stale drops = %+v", drops)
	}
	if in.viewers[0] != "f" {
		t.Errorf("got %v, want the fresh message", in.viewers)
	}
	st := q.stats()
	if st.Submitted != 6 || st.Merged != 1 || st.Shed != 1 || st.Stale != 1 || st.Started != 3 || st.Queued != 0 {
		t.Errorf("stats = %+v", st)
	}
	// Every message is accounted for: started (with merged viewers), shed or stale.
	if st.Submitted != st.Started+st.Merged+st.Shed+st.Stale {
		t.Errorf("messages lost: %+v", st)
	}
}

func TestQueueMergeWindow(t *testing.T) {
	q := newMessageQueue(QueueConfig{MergeWindow: 80 * time.Millisecond}, time.Now)
	q.push(Message{Viewer: "a", Text: "多少钱？？", At: time.Now()})
	go func() {
		time.Sleep(20 * time.Millisecond)
		q.push(Message{Viewer: "b", Text: "多少钱", At: time.Now()})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	in, _, ok := q.pop(ctx)
	if !ok || len(in.viewers) != 2 {
		t.Errorf("merge window: %v %v", ok, in.viewers)
	}
}

func TestClassify(t *testing.T) {
	cases := map[string]Priority{
		"这个多少钱": PriorityProduct, "what size for 170cm?": PriorityProduct,
		"链接在哪": PriorityPurchase, "any coupon?": PriorityPurchase,
		"什么时候发货": PriorityAfterSale, "can I return it": PriorityAfterSale,
		"主播好美": PriorityChat, "小鱼 来了": PriorityAmbient,
	}
	for text, want := range cases {
		if got := Classify(text); got != want {
			t.Errorf("Classify(%q) = %s, want %s", text, got, want)
		}
	}
}
