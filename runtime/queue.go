package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
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
	// MaxBytes rejects longer messages; default 2000.
	MaxBytes int
}

func (c QueueConfig) maxBytes() int {
	if c.MaxBytes <= 0 {
		return 2000
	}
	return c.MaxBytes
}

// QueueStats counts what happened to every submitted message: each is
// answered, merged into another, or dropped with a reason.
type QueueStats struct {
	Submitted int `json:"submitted"`
	Rejected  int `json:"rejected"`
	Merged    int `json:"merged"`
	Shed      int `json:"shed"`
	Stale     int `json:"stale"`
	Started   int `json:"started"`
	Queued    int `json:"queued"`
}

// input is what one turn answers: a message, or several merged ones.
type input struct {
	text     string
	viewers  []string
	at       time.Time
	priority Priority
	event    harness.HookEvent
	key      string
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
}

func newMessageQueue(cfg QueueConfig, now func() time.Time) *messageQueue {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 64
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = 30 * time.Second
	}
	return &messageQueue{cfg: cfg, now: now, wake: make(chan struct{}, 1)}
}

// dedupeKey normalises a message so that near-duplicates ("多少钱？？",
// "多少钱") share a key: case, spaces, punctuation and repeats removed.
func dedupeKey(s string) string {
	var b strings.Builder
	var last rune
	for _, r := range strings.ToLower(s) {
		if unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || r == last {
			continue
		}
		b.WriteRune(r)
		last = r
	}
	return b.String()
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
	in := &input{text: m.Text, viewers: []string{m.Viewer}, at: m.At, priority: Classify(m.Text), event: harness.EventViewerMessage, key: dedupeKey(m.Text)}
	if m.narration {
		in.priority, in.event, in.key = PriorityProduct, harness.EventNarrationTick, ""
	}
	if in.key != "" {
		for _, other := range q.items {
			if other.key == in.key {
				other.viewers = append(other.viewers, m.Viewer)
				q.st.Merged++
				return nil
			}
		}
	}
	q.items = append(q.items, in)
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
		for _, v := range d.viewers {
			out = append(out, dropped{Message{Viewer: v, Text: d.text, At: d.at}, fmt.Sprintf("shed: queue over %d messages (%s)", q.cfg.Capacity, d.priority)})
		}
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return out
}

// pop waits for the most urgent message, first dropping stale ones. It
// returns false when ctx is done or the queue is closed.
func (q *messageQueue) pop(ctx context.Context) (input, []dropped, bool) {
	var out []dropped
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return input{}, out, false
		}
		now := q.now()
		kept := q.items[:0]
		for _, it := range q.items {
			if now.Sub(it.at) > q.cfg.StaleAfter {
				q.st.Stale++
				for _, v := range it.viewers {
					out = append(out, dropped{Message{Viewer: v, Text: it.text, At: it.at}, fmt.Sprintf("stale: not started within %s", q.cfg.StaleAfter)})
				}
				continue
			}
			kept = append(kept, it)
		}
		q.items = kept
		best := -1
		for i, it := range q.items {
			if q.cfg.MergeWindow > 0 && now.Sub(it.at) < q.cfg.MergeWindow {
				continue // still collecting duplicates
			}
			if best < 0 || it.priority < q.items[best].priority {
				best = i
			}
		}
		if best >= 0 {
			it := q.items[best]
			q.items = append(q.items[:best], q.items[best+1:]...)
			q.st.Started++
			if len(q.items) > 0 {
				// Another worker may be idle while messages remain.
				select {
				case q.wake <- struct{}{}:
				default:
				}
			}
			q.mu.Unlock()
			return *it, out, true
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
			return input{}, out, false
		case <-q.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

func (q *messageQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *messageQueue) stats() QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.st
	st.Queued = len(q.items)
	return st
}
