package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// EventKind is what a viewer did on the shop side.
type EventKind string

// Commerce event kinds.
const (
	// KindItemView is an item-page view.
	KindItemView    EventKind = "item_view"
	KindAddToCart   EventKind = "add_to_cart"
	KindPurchase    EventKind = "purchase"
	KindCouponClaim EventKind = "coupon_claim"
	KindLinkClick   EventKind = "link_click"
)

// EventKinds lists every kind in a fixed order.
func EventKinds() []EventKind {
	return []EventKind{KindItemView, KindAddToCart, KindPurchase, KindCouponClaim, KindLinkClick}
}

// Event is one commerce event reported by the stream's shop side. It does
// not need to know about experiments: the report credits it to the arm of
// its stream or viewer. A shop that tags links with the experiment may set
// Experiment and Arm, and ingestion then checks them.
type Event struct {
	// ID makes ingestion idempotent: an event id is stored once.
	ID     string    `json:"id"`
	Stream string    `json:"stream_id"`
	Viewer string    `json:"viewer_id"`
	Item   string    `json:"item_id"`
	Kind   EventKind `json:"kind"`
	// AmountMinor is a purchase's value in the currency's minor unit (fen
	// for CNY), so sums are exact.
	AmountMinor int64     `json:"amount_minor,omitempty"`
	Currency    string    `json:"currency,omitempty"`
	Time        time.Time `json:"time"`
	Experiment  string    `json:"experiment_id,omitempty"`
	Arm         string    `json:"arm,omitempty"`
}

// EventStatus is what ingestion did with one event.
type EventStatus string

// Event statuses.
const (
	StatusAccepted  EventStatus = "accepted"
	StatusDuplicate EventStatus = "duplicate"
	StatusRejected  EventStatus = "rejected"
)

// EventResult is the outcome for one event of a batch.
type EventResult struct {
	Index  int         `json:"index"`
	ID     string      `json:"id"`
	Status EventStatus `json:"status"`
	// Reason says why an event was rejected (or what a duplicate
	// duplicated).
	Reason string `json:"reason,omitempty"`
}

// BatchResult is the outcome of one ingested batch: counts, and one
// result per event in the batch's order.
type BatchResult struct {
	Accepted   int           `json:"accepted"`
	Duplicates int           `json:"duplicates"`
	Rejected   int           `json:"rejected"`
	Events     []EventResult `json:"events"`
}

func (b *BatchResult) add(r EventResult) {
	switch r.Status {
	case StatusAccepted:
		b.Accepted++
	case StatusDuplicate:
		b.Duplicates++
	default:
		b.Rejected++
	}
	b.Events = append(b.Events, r)
}

// Validator checks events against the catalog and the clock before they
// are stored.
type Validator struct {
	// Items are the catalog's item ids; an event on any other is rejected.
	Items map[string]bool
	// MaxSkew is how far in the future an event's time may be, to absorb
	// the shop's clock running ahead of ours.
	MaxSkew time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewValidator returns a validator for a catalog of item ids.
func NewValidator(itemIDs []string, maxSkew time.Duration, now func() time.Time) Validator {
	items := make(map[string]bool, len(itemIDs))
	for _, id := range itemIDs {
		items[id] = true
	}
	return Validator{Items: items, MaxSkew: maxSkew, Now: now}
}

// maxIDLen bounds ids, so one bad client cannot fill the store with huge
// keys.
const maxIDLen = 128

// Check returns nil for a valid event, or an error naming what is wrong.
func (v Validator) Check(e Event) error {
	id := func(field, s string) error {
		switch {
		case s == "":
			return fmt.Errorf("%s is empty", field)
		case len(s) > maxIDLen:
			return fmt.Errorf("%s is %d bytes, more than %d", field, len(s), maxIDLen)
		case !utf8.ValidString(s):
			return fmt.Errorf("%s is not valid UTF-8", field)
		}
		return nil
	}
	for _, f := range []struct{ name, val string }{{"id", e.ID}, {"stream_id", e.Stream}, {"viewer_id", e.Viewer}, {"item_id", e.Item}} {
		if err := id(f.name, f.val); err != nil {
			return err
		}
	}
	switch e.Kind {
	case KindItemView, KindAddToCart, KindPurchase, KindCouponClaim, KindLinkClick:
	default:
		return fmt.Errorf("kind %q is unknown (want item_view, add_to_cart, purchase, coupon_claim or link_click)", e.Kind)
	}
	if !v.Items[e.Item] {
		return fmt.Errorf("item_id %q is not in the catalog", e.Item)
	}
	switch {
	case e.AmountMinor < 0:
		return fmt.Errorf("amount_minor %d is negative", e.AmountMinor)
	case e.Kind == KindPurchase && e.Currency == "":
		return errors.New("currency is missing on a purchase")
	case e.Kind != KindPurchase && (e.AmountMinor != 0 || e.Currency != ""):
		return fmt.Errorf("%s carries an amount or currency; only purchases do", e.Kind)
	case e.Currency != "" && !currencyPattern.MatchString(e.Currency):
		return fmt.Errorf("currency %q is not an ISO 4217 code such as CNY", e.Currency)
	case e.Time.IsZero():
		return errors.New("time is missing")
	case e.Time.Year() < 2000 || e.Time.Year() > 2200:
		return fmt.Errorf("time %s is out of range (years 2000–2200)", e.Time.UTC().Format(time.RFC3339))
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if ahead := e.Time.Sub(now()); ahead > v.MaxSkew {
		return fmt.Errorf("time %s is %v in the future, beyond the %v clock-skew tolerance", e.Time.UTC().Format(time.RFC3339Nano), ahead.Round(time.Millisecond), v.MaxSkew)
	}
	return nil
}

// checkTagged checks an event that names an experiment (and maybe an arm)
// against that experiment; exp is nil when no experiment has that id.
func checkTagged(e Event, exp *Experiment) error {
	if e.Experiment == "" {
		if e.Arm != "" {
			return fmt.Errorf("arm %q is set without an experiment_id", e.Arm)
		}
		return nil
	}
	if exp == nil {
		return fmt.Errorf("experiment_id %q is unknown", e.Experiment)
	}
	switch {
	case exp.State == StateDraft || exp.Started.IsZero():
		return fmt.Errorf("experiment %q has not started", exp.ID)
	case e.Time.Before(exp.Started):
		return fmt.Errorf("time is before experiment %q started", exp.ID)
	case !exp.Stopped.IsZero() && !e.Time.Before(exp.Stopped):
		return fmt.Errorf("experiment %q finished at %s", exp.ID, exp.Stopped.UTC().Format(time.RFC3339))
	}
	if e.Arm == "" {
		return nil
	}
	if exp.ArmIndex(e.Arm) < 0 {
		return fmt.Errorf("arm %q is not an arm of experiment %q", e.Arm, exp.ID)
	}
	unit, err := exp.UnitID(e.Stream, e.Viewer)
	if err != nil {
		return err
	}
	want, err := exp.Assign(unit)
	if err != nil {
		return err
	}
	if want.Name != e.Arm {
		return fmt.Errorf("arm %q is not the arm %q the %s %q is assigned to", e.Arm, want.Name, exp.Unit, unit)
	}
	return nil
}

// TurnRecord is what the experiment keeps of one avatar turn: which arm
// answered, how fast, what it talked about and whether it broke a rule.
type TurnRecord struct {
	// ID is the runtime's turn id; recording a turn twice keeps one.
	ID         string `json:"id"`
	Experiment string `json:"experiment_id"`
	Stream     string `json:"stream_id"`
	// Viewer is who asked; empty for a narration nobody asked for.
	Viewer  string        `json:"viewer_id,omitempty"`
	Arm     string        `json:"arm"`
	Time    time.Time     `json:"time"`
	Latency time.Duration `json:"latency_ns"`
	// Items are the catalog items the reply mentioned (showed, looked up,
	// linked): the start of their attribution windows.
	Items []string `json:"items,omitempty"`
	// Violation is a compliance hook denying, rewriting or retrying the
	// reply.
	Violation bool `json:"violation,omitempty"`
	// Shed is how many viewer messages the session's queue dropped under
	// load since the previous turn.
	Shed int `json:"shed,omitempty"`
}

// Exposure is a viewer seen in a stream under an arm: the record of an
// assignment, and the denominator of per-viewer metrics.
type Exposure struct {
	Stream string    `json:"stream_id"`
	Viewer string    `json:"viewer_id,omitempty"`
	Unit   string    `json:"unit_id"`
	Arm    string    `json:"arm"`
	Time   time.Time `json:"time"`
}

// StreamSession is one time on air of a stream during an experiment. A
// stream that restarts gets a new session and keeps its arm; the hours of
// its sessions add up.
type StreamSession struct {
	ID     string    `json:"id"`
	Stream string    `json:"stream_id"`
	Start  time.Time `json:"start"`
	// End is zero while the session is on air.
	End time.Time `json:"end,omitzero"`
}

// ErrBatchTooLarge is returned (wrapped) by DecodeBatch for a batch of
// more than MaxBatch events, so that an API can answer 413 rather than 400.
var ErrBatchTooLarge = errors.New("batch too large")

// DecodeBatch reads a batch of events as the shop side sends it, a JSON
// object {"events": [...]}, strictly: unknown fields, trailing data and
// more than MaxBatch events are errors that say where.
func DecodeBatch(r io.Reader) ([]Event, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var body struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("events batch: %w", err)
	}
	if dec.More() {
		return nil, errors.New("events batch: data after the JSON object")
	}
	if body.Events == nil {
		return nil, errors.New(`events batch: "events" is missing`)
	}
	if len(body.Events) > MaxBatch {
		return nil, fmt.Errorf("events batch: %d events, more than %d: %w", len(body.Events), MaxBatch, ErrBatchTooLarge)
	}
	out := make([]Event, len(body.Events))
	for i, raw := range body.Events {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&out[i]); err != nil {
			return nil, fmt.Errorf("events[%d]: %w", i, err)
		}
	}
	return out, nil
}
