package experiment

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDecodeBatch(t *testing.T) {
	evs, err := DecodeBatch(strings.NewReader(`{"events":[{"id":"e1","stream_id":"s","viewer_id":"v","item_id":"A","kind":"purchase","amount_minor":1999,"currency":"CNY","time":"2026-03-01T20:05:00Z"}]}`))
	if err != nil || len(evs) != 1 || evs[0].AmountMinor != 1999 || !evs[0].Time.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("DecodeBatch = %+v, %v", evs, err)
	}
	for in, want := range map[string]string{
		`{"events":[{"id":"e1","price":3}]}`:          "events[0]",
		`{"events":[{"id":"e1","time":"yesterday"}]}`: "events[0]",
		`{"evts":[]}`:      "unknown field",
		`{}`:               "missing",
		`{"events":[]} {}`: "after the JSON object",
		`[`:                "events batch",
	} {
		if _, err := DecodeBatch(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeBatch(%s) = %v, want an error about %s", in, err, want)
		}
	}
}

// FuzzDecodeBatch: any input either fails cleanly or gives events that
// survive validation without panicking and round-trip through JSON.
func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`{"events":[{"id":"e1","stream_id":"s","viewer_id":"v","item_id":"A","kind":"purchase","amount_minor":1999,"currency":"CNY","time":"2026-03-01T20:05:00Z"}]}`))
	f.Add([]byte(`{"events":[{"id":"e2","stream_id":"s","viewer_id":"v","item_id":"B","kind":"item_view","time":"2026-03-01T20:05:00+08:00","experiment_id":"x","arm":"a"}]}`))
	f.Add([]byte(`{"events":[{"amount_minor":-1}]}`))
	v := NewValidator([]string{"A"}, time.Second, func() time.Time { return t0 })
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := DecodeBatch(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, ev := range evs {
			if err := v.Check(ev); err == nil {
				if ev.AmountMinor < 0 || !v.Items[ev.Item] || ev.ID == "" || ev.Time.After(t0.Add(time.Second)) {
					t.Fatalf("invalid event accepted: %+v", ev)
				}
			}
			_ = checkTagged(ev, nil)
		}
		out, err := json.Marshal(map[string]any{"events": evs})
		if err != nil {
			return // a time outside JSON's year range decodes but does not encode
		}
		back, err := DecodeBatch(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		for i := range evs {
			if !sameEvent(evs[i], back[i]) {
				t.Fatalf("event %d changed in a round trip: %+v → %+v", i, evs[i], back[i])
			}
		}
	})
}
