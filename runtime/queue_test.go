package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
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
	in := popOne(t, q)
	if in.priority != PriorityProduct || strings.Join(in.viewers, ",") != "b,c" {
		t.Errorf("first = %v %v, want the merged product question", in.priority, in.viewers)
	}
	in = popOne(t, q)
	if in.priority != PriorityPurchase {
		t.Errorf("second = %v, want purchase", in.priority)
	}
	clock.advance(31 * time.Second)
	push("f", "What size should I get?")
	batch, drops, _ := q.pop(ctx)
	in = batch[0]
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

// popOne pops a turn that must hold exactly one question.
func popOne(t *testing.T, q *messageQueue) input {
	t.Helper()
	batch, _, ok := q.pop(context.Background())
	if !ok || len(batch) != 1 {
		t.Fatalf("pop = %v, %d questions; want one", ok, len(batch))
	}
	return batch[0]
}

func TestNearDuplicates(t *testing.T) {
	merge := [][2]string{
		{"多少钱 精华", "精华多少钱？"},
		{"精华多少钱？？", "精华多少钱呀"},
		{"ＳＥＲＵＭ　多少钱", "serum多少钱"},
		{"How much is the serum?", "serum how much??"},
		{"pls how much is the serum", "how much is serum"},
		{"Is the dress in red still in stock?", "dress in red still in stock"},
		{"what's the price of the lipstick", "whats price of lipstick"},
		{"is the lipstick in stock", "is the lipstik in stock"}, // a one-letter typo in a long word
		{"helllo is the dress in stock", "hello dress in stock"},
		{"身高170体重60公斤，连衣裙穿什么码？", "连衣裙穿什么码 身高170 体重60公斤"},
	}
	for _, c := range merge {
		if !sameQuestion(shapeOf(c[0]), shapeOf(c[1])) {
			t.Errorf("%q and %q should merge (shapes %v, %v)", c[0], c[1], shapeOf(c[0]).tokens, shapeOf(c[1]).tokens)
		}
	}
	keep := [][2]string{
		{"精华多少钱", "口红多少钱"},                               // different items
		{"连衣裙的红色还有货吗", "连衣裙的蓝色还有货吗"},                     // different variants: one character apart
		{"身高170体重60公斤，连衣裙穿什么码？", "身高165体重60公斤，连衣裙穿什么码？"}, // digits are significant
		{"买2件能用券吗", "买3件能用券吗"},
		{"100元能用券吗", "10元能用券吗"},
		{"How much is the serum?", "How much is the lipstick?"},
		{"Is the dress in red still in stock?", "Is the dress in blue still in stock?"},
		{"which size for XL", "which size for XXL"},
		{"多少钱", "精华多少钱"}, // one names the item, the other does not
		{"serum price?", "serum price and shipping?"},
		{"dress size?", "dress sizes and colours?"},
	}
	for _, c := range keep {
		if sameQuestion(shapeOf(c[0]), shapeOf(c[1])) {
			t.Errorf("%q and %q must not merge (shapes %v, %v)", c[0], c[1], shapeOf(c[0]).tokens, shapeOf(c[1]).tokens)
		}
	}
}

func TestQueueMergesNearDuplicatesOfOneClass(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	q := newMessageQueue(QueueConfig{}, clock.now)
	push := func(v, text string) { q.push(Message{Viewer: v, Text: text, At: clock.now()}) }
	push("a", "多少钱 精华")
	push("b", "精华多少钱？")   // near-duplicate: merged into a
	push("c", "口红多少钱？")   // another item: its own question
	push("d", "精华 链接")    // purchase class
	push("e", "链接 精华！！！") // near-duplicate of d, not of a
	st := q.stats()
	if st.Merged != 2 || st.Queued != 3 {
		t.Fatalf("stats = %+v, want 2 merged and 3 questions queued", st)
	}
	in := popOne(t, q)
	if strings.Join(in.viewers, ",") != "a,b" || len(in.asks) != 2 || in.asks[1].Text != "精华多少钱？" {
		t.Errorf("first question = %v %+v, want a and b with their own texts", in.viewers, in.asks)
	}
	if in = popOne(t, q); strings.Join(in.viewers, ",") != "c" {
		t.Errorf("second question = %v, want c", in.viewers)
	}
	if in = popOne(t, q); strings.Join(in.viewers, ",") != "d,e" {
		t.Errorf("third question = %v, want d,e", in.viewers)
	}
}

func TestQueueBatchesOneClass(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	q := newMessageQueue(QueueConfig{Batch: 3}, clock.now)
	push := func(v, text string) { q.push(Message{Viewer: v, Text: text, At: clock.now()}) }
	push("a", "主播好美")                 // chat
	push("b", "精华多少钱？")               // product
	push("c", "链接在哪")                 // purchase
	push("d", "口红多少钱？")               // product
	push("e", "what size for 170cm?") // product
	push("f", "面霜是什么材质？")             // product, beyond the bound
	push("g", "精华多少钱")                // merged into b
	q.push(Message{Viewer: "host", Text: "introduce the featured item", At: clock.now(), narration: true})
	batch, _, ok := q.pop(context.Background())
	var got []string
	for _, in := range batch {
		got = append(got, strings.Join(in.viewers, "+"))
	}
	if !ok || strings.Join(got, ",") != "b+g,d,e" {
		t.Errorf("batch = %v, want the three oldest product questions b+g, d, e", got)
	}
	// The fourth product question and the narration (product class, never
	// batched) come next, each alone since narration does not batch and
	// leads its own turn when it is the oldest left.
	batch, _, _ = q.pop(context.Background())
	if len(batch) != 1 || batch[0].viewers[0] != "f" {
		t.Errorf("second turn = %+v, want f alone (narration never joins a batch)", batch)
	}
	batch, _, _ = q.pop(context.Background())
	if len(batch) != 1 || batch[0].event != harness.EventNarrationTick {
		t.Errorf("third turn = %+v, want the narration alone", batch)
	}
	batch, _, _ = q.pop(context.Background())
	if len(batch) != 1 || batch[0].viewers[0] != "c" {
		t.Errorf("fourth turn = %+v, want the purchase question", batch)
	}
	st := q.stats()
	if st.Started != 4 || st.Batched != 2 || st.Merged != 1 || st.Queued != 1 {
		t.Errorf("stats = %+v", st)
	}
	if st.Submitted != st.Started+st.Batched+st.Merged+st.Shed+st.Stale+st.Queued {
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
	batch, _, ok := q.pop(ctx)
	if !ok || len(batch) != 1 || len(batch[0].viewers) != 2 {
		t.Errorf("merge window: %v %+v", ok, batch)
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

// FuzzShapeOf: tokenising any text terminates, a message is always the
// same question as itself and as itself with trailing punctuation, and
// the relation is symmetric.
func FuzzShapeOf(f *testing.F) {
	for _, s := range []string{"精华多少钱？", "How much is the serum??", "身高170体重60公斤", "ＸＸＬ", "it's", "\xff", ""} {
		f.Add(s, "how much is the lipstick")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, sb := shapeOf(a), shapeOf(b)
		if !sameQuestion(sa, sa) || !sameQuestion(sa, shapeOf(a+" ？！!!")) {
			t.Errorf("%q is not the same question as itself: %v", a, sa.tokens)
		}
		if sameQuestion(sa, sb) != sameQuestion(sb, sa) {
			t.Errorf("sameQuestion(%q, %q) is not symmetric", a, b)
		}
	})
}

// TestQueueAgeing checks that a waiting question rises one class per
// PromoteAfter, so chit-chat waits a bounded time behind a stream of
// product questions, that ties go to the oldest, and that a negative
// PromoteAfter keeps strict priority.
func TestQueueAgeing(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	q := newMessageQueue(QueueConfig{PromoteAfter: 2 * time.Second}, clock.now)
	push := func(q *messageQueue, v, text string) { q.push(Message{Viewer: v, Text: text, At: clock.now()}) }
	push(q, "chat", "主播好漂亮") // chit-chat: class 3
	clock.advance(5 * time.Second)
	push(q, "p1", "How much is the serum?")
	if in := popOne(t, q); in.viewers[0] != "p1" {
		t.Errorf("after 5 s the chat line (aged to class 1) went before a product question: got %v", in.viewers)
	}
	clock.advance(2 * time.Second) // the chat line has waited 7 s: class 0
	push(q, "p2", "面霜有货吗")
	if in := popOne(t, q); in.viewers[0] != "chat" {
		t.Errorf("after 7 s the chat line should tie with product questions and win as the oldest: got %v", in.viewers)
	}
	if in := popOne(t, q); in.viewers[0] != "p2" {
		t.Errorf("got %v, want p2", in.viewers)
	}

	strict := newMessageQueue(QueueConfig{PromoteAfter: -1}, clock.now)
	push(strict, "chat", "主播好漂亮")
	clock.advance(20 * time.Second)
	push(strict, "p3", "How much is the cream?")
	if in := popOne(t, strict); in.viewers[0] != "p3" {
		t.Errorf("strict priority: got %v first, want the product question", in.viewers)
	}
}

// TestQueueStatsAdd checks that Add sums every counter, so a room's
// sessions add up to what one session would report.
func TestQueueStatsAdd(t *testing.T) {
	a := QueueStats{Submitted: 1, Rejected: 2, Merged: 3, Shed: 4, Stale: 5, Closed: 6, Started: 7, Batched: 8, Queued: 9}
	got := a.Add(a)
	want := QueueStats{Submitted: 2, Rejected: 4, Merged: 6, Shed: 8, Stale: 10, Closed: 12, Started: 14, Batched: 16, Queued: 18}
	if got != want {
		t.Errorf("Add = %+v, want %+v", got, want)
	}
}
