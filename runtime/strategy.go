package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Strategy is the merchant's marketing plan as rules that make the host
// speak when nobody asks. Narration goes through the same turn loop (event
// narration_tick), so hooks and compliance apply to it too.
type Strategy struct {
	Rules []StrategyRule `json:"rules"`
}

// StrategyRule fires a narration turn on a schedule or on a signal.
type StrategyRule struct {
	Name string `json:"name"`
	// Every fires the rule periodically (e.g. introduce the featured item
	// every three minutes); zero means only on its signal.
	Every time.Duration `json:"every,omitempty"`
	// Signal and Threshold fire the rule when a signal's value reaches the
	// threshold (e.g. price_questions ≥ 5 in the window → announce the
	// coupon). Signals: "price_questions" and "messages" (counted by the
	// session over Window, from the messages submitted to it and those it
	// was told of with Observe), plus whatever Config.Signals reports (e.g.
	// "stock_low" for the featured item).
	Signal    string  `json:"signal,omitempty"`
	Threshold float64 `json:"threshold,omitempty"`
	// Window is the signal's counting window; default one minute.
	Window time.Duration `json:"window,omitempty"`
	// Cooldown is the least time between two firings; default Every, or
	// one minute for signal rules.
	Cooldown time.Duration `json:"cooldown,omitempty"`
	// Instruction is what the model is asked to say, e.g. "Announce the
	// active coupon of the featured item and pin its link."
	Instruction string `json:"instruction"`
}

// Validate checks the rules.
func (s Strategy) Validate() error {
	seen := map[string]bool{}
	for i, r := range s.Rules {
		switch {
		case r.Name == "":
			return fmt.Errorf("strategy rule %d: name is empty", i)
		case seen[r.Name]:
			return fmt.Errorf("strategy rule %q: duplicate name", r.Name)
		case strings.TrimSpace(r.Instruction) == "":
			return fmt.Errorf("strategy rule %q: instruction is empty", r.Name)
		case r.Every <= 0 && r.Signal == "":
			return fmt.Errorf("strategy rule %q: give a schedule (every) or a signal", r.Name)
		case r.Every < 0 || r.Cooldown < 0 || r.Window < 0:
			return fmt.Errorf("strategy rule %q: durations must not be negative", r.Name)
		case r.Every > 0 && r.Every < time.Second:
			return fmt.Errorf("strategy rule %q: every %s is shorter than a second", r.Name, r.Every)
		}
		seen[r.Name] = true
	}
	return nil
}

// signalCounter counts messages per signal over time.
type signalCounter struct {
	mu     sync.Mutex
	events map[string][]time.Time
}

func (c *signalCounter) add(signal string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		c.events = map[string][]time.Time{}
	}
	c.events[signal] = append(c.events[signal], at)
	// Keep at most ten minutes of history; windows are shorter.
	ev := c.events[signal]
	cut := 0
	for cut < len(ev) && at.Sub(ev[cut]) > 10*time.Minute {
		cut++
	}
	c.events[signal] = ev[cut:]
}

func (c *signalCounter) count(signal string, now time.Time, window time.Duration) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.events[signal] {
		if now.Sub(t) <= window {
			n++
		}
	}
	return float64(n)
}

// observe counts a viewer message at its time: one message, and one
// price question when it asks about price.
func (c *signalCounter) observe(m Message) {
	c.add("messages", m.At)
	if isPriceQuestion(m.Text) {
		c.add("price_questions", m.At)
	}
}

// isPriceQuestion reports whether a viewer asks about price or discounts.
func isPriceQuestion(text string) bool {
	t := strings.ToLower(text)
	for _, w := range []string{"price", "how much", "cost", "discount", "coupon", "cheaper", "多少钱", "价格", "优惠", "便宜", "券", "几块"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// RunStrategy evaluates the strategy every tick until ctx is done, queueing
// a narration turn each time a rule fires. It returns the number of
// narrations queued.
func (s *Session) RunStrategy(ctx context.Context, st Strategy, tick time.Duration) (int, error) {
	if err := st.Validate(); err != nil {
		return 0, err
	}
	if tick <= 0 {
		tick = time.Second
	}
	last := map[string]time.Time{}
	start := s.cfg.Now()
	fired := 0
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return fired, nil
		case <-s.done:
			return fired, nil
		case <-t.C:
		}
		now := s.cfg.Now()
		for _, r := range st.Rules {
			if s.ruleDue(r, last, start, now) {
				last[r.Name] = now
				if s.cfg.RuleFired != nil {
					s.cfg.RuleFired(r)
				}
				if err := s.Narrate(r.Instruction); err != nil {
					return fired, nil // session closed
				}
				fired++
			}
		}
	}
}

func (s *Session) ruleDue(r StrategyRule, last map[string]time.Time, start, now time.Time) bool {
	prev, ok := last[r.Name]
	if !ok {
		prev = start
	}
	cooldown := r.Cooldown
	if cooldown == 0 {
		cooldown = r.Every
		if cooldown == 0 {
			cooldown = time.Minute
		}
	}
	if ok && now.Sub(prev) < cooldown {
		return false
	}
	if r.Signal != "" {
		return s.signal(r.Signal, now, r.Window) >= r.Threshold
	}
	return now.Sub(prev) >= r.Every
}

// signal returns a signal's value now.
func (s *Session) signal(name string, now time.Time, window time.Duration) float64 {
	if window <= 0 {
		window = time.Minute
	}
	switch name {
	case "price_questions", "messages":
		return s.signals.count(name, now, window)
	}
	if s.cfg.Signals != nil {
		return s.cfg.Signals()[name]
	}
	return 0
}
