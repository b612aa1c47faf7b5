package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
)

// Message is a viewer's danmaku (chat message) as it reaches the session.
type Message struct {
	Viewer string    `json:"viewer"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
	// narration marks a proactive turn the session schedules itself.
	narration bool
}

func (m Message) check(maxBytes int) error {
	switch {
	case strings.TrimSpace(m.Text) == "":
		return errors.New("runtime: empty message")
	case len(m.Text) > maxBytes:
		return fmt.Errorf("runtime: message of %d bytes is over the %d-byte limit", len(m.Text), maxBytes)
	case !utf8.ValidString(m.Text):
		return errors.New("runtime: message is not valid UTF-8")
	case strings.ContainsRune(m.Text, 0):
		return errors.New("runtime: message contains a NUL byte")
	}
	return nil
}

// Priority is the class of a viewer message; lower is more urgent.
type Priority int

// Priority classes, most urgent first, as live rooms rank them.
const (
	PriorityProduct   Priority = iota // a question about an item
	PriorityPurchase                  // purchase intent: link, coupon, order
	PriorityAfterSale                 // shipping, returns
	PriorityChat                      // chit-chat
	PriorityAmbient                   // entrance, gifts, likes
	priorityCount
)

// String names the class, e.g. "product".
func (p Priority) String() string {
	return [...]string{"product", "purchase", "after_sale", "chat", "ambient"}[p]
}

// Classify ranks a message by keywords in zh and en. It is a cheap first
// cut that decides queue order, not what the model answers.
func Classify(text string) Priority {
	t := strings.ToLower(text)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(t, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("link", "coupon", "buy", "order", "cart", "discount", "链接", "券", "下单", "拍", "优惠", "怎么买"):
		return PriorityPurchase
	case has("ship", "deliver", "return", "refund", "发货", "快递", "退", "换货", "售后"):
		return PriorityAfterSale
	case has("price", "how much", "size", "stock", "material", "cheaper", "多少钱", "价格", "尺码", "码", "有货", "库存", "材质", "成分", "便宜", "?", "？"):
		return PriorityProduct
	case has("joined", "entered", "gift", "like", "来了", "进入直播间", "送出", "点赞"):
		return PriorityAmbient
	}
	return PriorityChat
}

// QueueConfig shapes a session's queue.
type QueueConfig struct {
	// Capacity bounds queued messages; default 64. Past it the lowest
	// priority, oldest message is shed.
	Capacity int
	// StaleAfter drops a message not started within it; default 30 s (an
	// answer that late is worse than none).
	StaleAfter time.Duration
	// MergeWindow collects messages for this long before a turn starts,
	// so near-duplicates merge into one answer; default 0 (no wait).
	MergeWindow time.Duration
	// Batch is how many distinct questions of the most urgent class one
	// turn may answer together, addressed to their viewers, as the report
	// merges one time window's danmaku into one request: a burst of
	// distinct questions then waits about one turn instead of one turn
	// each. Default 1 (a turn answers one question); see BENCHMARKS.md for
	// what larger values buy.
	Batch int
	// PromoteAfter raises a waiting question one priority class for each
	// PromoteAfter it has waited, so a burst of product questions defers
	// chit-chat and after-sales by a bounded time rather than until they go
	// stale, and within a class the oldest goes first; default 2 s (a chat
	// line then competes with new product questions after 6 s). Negative
	// turns ageing off: strict priority.
	PromoteAfter time.Duration
	// MaxBytes rejects longer messages; default 2000.
	MaxBytes int
}

// urgency is a question's class after ageing (lower is more urgent).
func (c QueueConfig) urgency(it *input, now time.Time) Priority {
	if c.PromoteAfter <= 0 {
		return it.priority
	}
	return max(0, it.priority-Priority(now.Sub(it.at)/c.PromoteAfter))
}

func (c QueueConfig) maxBytes() int {
	if c.MaxBytes <= 0 {
		return 2000
	}
	return c.MaxBytes
}

// QueueStats counts what happened to every submitted message: each is
// taken up by a turn, merged into another, or dropped with a reason, so
// Submitted = Started + Batched + Merged + Shed + Stale + Closed + Queued.
type QueueStats struct {
	Submitted int `json:"submitted"`
	Rejected  int `json:"rejected"`
	Merged    int `json:"merged"`
	Shed      int `json:"shed"`
	Stale     int `json:"stale"`
	// Closed counts questions still queued when the session ended.
	Closed int `json:"closed"`
	// Started counts turns; Batched counts the further questions a turn
	// answered together with its first (QueueConfig.Batch).
	Started int `json:"started"`
	Batched int `json:"batched"`
	Queued  int `json:"queued"`
}

// Add returns the counters of s and o together, as for the sessions of
// one room.
func (s QueueStats) Add(o QueueStats) QueueStats {
	s.Submitted += o.Submitted
	s.Rejected += o.Rejected
	s.Merged += o.Merged
	s.Shed += o.Shed
	s.Stale += o.Stale
	s.Closed += o.Closed
	s.Started += o.Started
	s.Batched += o.Batched
	s.Queued += o.Queued
	return s
}

// input is one question a turn answers: a message, with the
// near-duplicates merged into it.
type input struct {
	text     string
	viewers  []string
	asks     []Message // every message merged here, the first one's text is text
	at       time.Time
	priority Priority
	event    harness.HookEvent
	shape    questionShape
}

type dropped struct {
	msg    Message
	reason string
}

type messageQueue struct {
	cfg    QueueConfig
	now    func() time.Time
	mu     sync.Mutex
	items  []*input
	st     QueueStats
	wake   chan struct{}
	closed bool
	// depth, when set, is told the queue's length after every change,
	// under mu, so an exported gauge sees the changes in their order.
	depth func(n int)
}

// changed reports the queue's length to depth; q.mu must be held.
func (q *messageQueue) changed() {
	if q.depth != nil {
		q.depth(len(q.items))
	}
}

func newMessageQueue(cfg QueueConfig, now func() time.Time) *messageQueue {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 64
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = 30 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 1
	}
	if cfg.PromoteAfter == 0 {
		cfg.PromoteAfter = 2 * time.Second
	}
	return &messageQueue{cfg: cfg, now: now, wake: make(chan struct{}, 1)}
}

func (q *messageQueue) countRejected() {
	q.mu.Lock()
	q.st.Rejected++
	q.mu.Unlock()
}

func (q *messageQueue) push(m Message) []dropped {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.st.Submitted++
	if q.closed {
		return []dropped{{m, "session closed"}}
	}
	in := &input{text: m.Text, viewers: []string{m.Viewer}, asks: []Message{m}, at: m.At, priority: Classify(m.Text), event: harness.EventViewerMessage}
	if m.narration {
		in.priority, in.event = PriorityProduct, harness.EventNarrationTick
	} else {
		in.shape = shapeOf(m.Text)
		for _, other := range q.items {
			if other.event == in.event && other.priority == in.priority && sameQuestion(other.shape, in.shape) {
				other.viewers = append(other.viewers, m.Viewer)
				other.asks = append(other.asks, m)
				q.st.Merged++
				return nil
			}
		}
	}
	q.items = append(q.items, in)
	defer q.changed()
	var out []dropped
	for len(q.items) > q.cfg.Capacity {
		// Shed the lowest-priority, oldest message.
		worst := 0
		for i, it := range q.items {
			if it.priority > q.items[worst].priority {
				worst = i
			}
		}
		d := q.items[worst]
		q.items = append(q.items[:worst], q.items[worst+1:]...)
		q.st.Shed++
		for _, m := range d.asks {
			out = append(out, dropped{Message{Viewer: m.Viewer, Text: m.Text, At: m.At}, fmt.Sprintf("shed: queue over %d messages (%s)", q.cfg.Capacity, d.priority)})
		}
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return out
}

// pop waits for the most urgent question, first dropping stale ones, and
// takes with it up to cfg.Batch-1 more questions of the same class (oldest
// first) for one turn. It returns false when ctx is done or the queue is
// closed.
func (q *messageQueue) pop(ctx context.Context) ([]input, []dropped, bool) {
	var out []dropped
	for {
		q.mu.Lock()
		if q.closed || ctx.Err() != nil {
			// A stopping session starts no turn; close drops what is left.
			q.mu.Unlock()
			return nil, out, false
		}
		now := q.now()
		kept := q.items[:0]
		for _, it := range q.items {
			if now.Sub(it.at) > q.cfg.StaleAfter {
				q.st.Stale++
				for _, m := range it.asks {
					out = append(out, dropped{Message{Viewer: m.Viewer, Text: m.Text, At: m.At}, fmt.Sprintf("stale: not started within %s", q.cfg.StaleAfter)})
				}
				continue
			}
			kept = append(kept, it)
		}
		if len(kept) < len(q.items) {
			clear(q.items[len(kept):])
			q.items = kept
			q.changed()
		}
		ready := func(it *input) bool { return q.cfg.MergeWindow <= 0 || now.Sub(it.at) >= q.cfg.MergeWindow }
		best := -1
		for i, it := range q.items {
			if !ready(it) {
				continue // still collecting duplicates
			}
			if best < 0 {
				best = i
				continue
			}
			u, bu := q.cfg.urgency(it, now), q.cfg.urgency(q.items[best], now)
			if u < bu || (u == bu && it.at.Before(q.items[best].at)) {
				best = i
			}
		}
		if best >= 0 {
			lead := q.items[best]
			batch := []input{*lead}
			rest := q.items[:0]
			for i, it := range q.items {
				switch {
				case i == best:
				case i > best && len(batch) < q.cfg.Batch && it.event == harness.EventViewerMessage &&
					lead.event == harness.EventViewerMessage && it.priority == lead.priority && ready(it):
					batch = append(batch, *it)
				default:
					rest = append(rest, it)
				}
			}
			clear(q.items[len(rest):])
			q.items = rest
			q.st.Started++
			q.st.Batched += len(batch) - 1
			q.changed()
			if len(q.items) > 0 {
				// Another worker may be idle while messages remain.
				select {
				case q.wake <- struct{}{}:
				default:
				}
			}
			q.mu.Unlock()
			return batch, out, true
		}
		wait := time.Duration(-1)
		if len(q.items) > 0 && q.cfg.MergeWindow > 0 {
			wait = q.cfg.MergeWindow / 4
		}
		q.mu.Unlock()
		var timer *time.Timer
		var fire <-chan time.Time
		if wait > 0 {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return nil, out, false
		case <-q.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// close stops the queue and returns the messages still in it, each
// dropped with the reason "session closed"; a second close returns none.
func (q *messageQueue) close() []dropped {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	select {
	case q.wake <- struct{}{}:
	default:
	}
	var out []dropped
	for _, it := range q.items {
		q.st.Closed++
		for _, m := range it.asks {
			out = append(out, dropped{Message{Viewer: m.Viewer, Text: m.Text, At: m.At}, "session closed: still queued"})
		}
	}
	q.items = nil
	q.changed()
	return out
}

func (q *messageQueue) stats() QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.st
	st.Queued = len(q.items)
	return st
}
