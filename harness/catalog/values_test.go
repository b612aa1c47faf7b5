package catalog

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestDate(t *testing.T) {
	tests := []struct {
		in      string
		want    Date
		wantErr bool
	}{
		{"2026-12-10", Date{2026, time.December, 10}, false},
		{"2028-02-29", Date{2028, time.February, 29}, false},
		{"2026-02-29", Date{}, true},
		{"2026-13-01", Date{}, true},
		{"2026-1-5", Date{}, true},
		{"2026/12/10", Date{}, true},
		{"", Date{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDate(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseDate(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
			b, err := json.Marshal(got)
			if err != nil || string(b) != `"`+tt.in+`"` {
				t.Errorf("Marshal = %s, %v; want %q", b, err, tt.in)
			}
		})
	}
	if _, err := json.Marshal(Date{2026, time.February, 30}); err == nil {
		t.Error("Marshal of 2026-02-30 succeeded; want an error")
	}
	var absent struct {
		D Date `json:"d,omitzero"`
	}
	if b, _ := json.Marshal(absent); string(b) != "{}" {
		t.Errorf("absent date marshals as %s, want it left out", b)
	}
}

func TestSpecValue(t *testing.T) {
	tests := []struct {
		json string
		want SpecValue
		str  string
	}{
		{`"cotton"`, TextValue("cotton"), "cotton"},
		{`""`, TextValue(""), ""},
		{`30`, NumberValue(30), "30"},
		{`4.5`, NumberValue(4.5), "4.5"},
		{`0`, NumberValue(0), "0"},
		{`true`, BoolValue(true), "true"},
		{`false`, BoolValue(false), "false"},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			var v SpecValue
			if err := json.Unmarshal([]byte(tt.json), &v); err != nil {
				t.Fatal(err)
			}
			if v != tt.want || v.IsZero() {
				t.Fatalf("Unmarshal(%s) = %#v, want %#v", tt.json, v, tt.want)
			}
			if v.String() != tt.str {
				t.Errorf("String() = %q, want %q", v.String(), tt.str)
			}
			b, err := json.Marshal(v)
			if err != nil || string(b) != tt.json {
				t.Errorf("Marshal = %s, %v; want %s", b, err, tt.json)
			}
		})
	}
	// Each accessor answers only for its own kind: false is a stated
	// "no", not "not a bool", and 0 is a number.
	no := BoolValue(false)
	if b, ok := no.Bool(); b || !ok {
		t.Errorf("BoolValue(false).Bool() = %v, %v", b, ok)
	}
	if _, ok := no.Number(); ok {
		t.Error("BoolValue(false).Number() ok")
	}
	if _, ok := NumberValue(0).Text(); ok {
		t.Error("NumberValue(0).Text() ok")
	}
	for _, bad := range []string{`null`, `[1]`, `{"a": 1}`} {
		var v SpecValue
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s) = %#v, want an error", bad, v)
		}
	}
	if !(SpecValue{}).IsZero() {
		t.Error("zero SpecValue is not IsZero")
	}
	if s := NumberValue(math.Inf(1)).String(); s != "+Inf" {
		t.Errorf("String of +Inf = %q", s)
	}
}
