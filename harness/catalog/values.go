package catalog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// StockState is a product's or variant's stock as viewers are told it.
type StockState string

// The stock states.
const (
	InStock StockState = "in_stock"
	// LowStock is stock that is running out (see LowStockBelow).
	LowStock StockState = "low"
	SoldOut  StockState = "sold_out"
	// Presale is sold now and shipped later (see Product.PresaleShipDate).
	Presale StockState = "presale"
)

// Date is a calendar date without a time of day; its JSON form is the
// string "YYYY-MM-DD". The zero Date is absent: not stated.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// dateLayout is the one form of a Date in JSON.
const dateLayout = "2006-01-02"

// ParseDate reads a date in the form "YYYY-MM-DD", rejecting dates that
// are not on the calendar ("2026-02-30").
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return Date{}, fmt.Errorf("date %q is not a calendar date in the form YYYY-MM-DD", s)
	}
	return DateOf(t), nil
}

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// IsZero reports whether d is absent.
func (d Date) IsZero() bool { return d == Date{} }

// String returns d as "YYYY-MM-DD", or "" when d is absent.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// MarshalText writes d as "YYYY-MM-DD"; a date off the calendar, or one
// outside the years 1-9999, is an error.
func (d Date) MarshalText() ([]byte, error) {
	s := d.String()
	if back, err := ParseDate(s); err != nil || back != d {
		return nil, fmt.Errorf("date %d-%d-%d is not a calendar date in the years 1-9999", d.Year, int(d.Month), d.Day)
	}
	return []byte(s), nil
}

// UnmarshalText reads a date written as "YYYY-MM-DD".
func (d *Date) UnmarshalText(b []byte) error {
	parsed, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = parsed
	return nil
}

// SpecValue is the value of a Spec: exactly one of a text, a number and a
// bool, written in JSON as that plain value. The zero SpecValue holds
// nothing and is not valid in a catalog.
type SpecValue struct {
	kind   specKind
	text   string
	number float64
	flag   bool
}

type specKind uint8

const (
	specNone specKind = iota
	specText
	specNumber
	specBool
)

// TextValue returns a SpecValue holding the text s.
func TextValue(s string) SpecValue { return SpecValue{kind: specText, text: s} }

// NumberValue returns a SpecValue holding the number x.
func NumberValue(x float64) SpecValue { return SpecValue{kind: specNumber, number: x} }

// BoolValue returns a SpecValue holding the yes/no b.
func BoolValue(b bool) SpecValue { return SpecValue{kind: specBool, flag: b} }

// Text returns the text v holds and whether it holds a text.
func (v SpecValue) Text() (string, bool) { return v.text, v.kind == specText }

// Number returns the number v holds and whether it holds a number.
func (v SpecValue) Number() (float64, bool) { return v.number, v.kind == specNumber }

// Bool returns the yes/no v holds and whether it holds one.
func (v SpecValue) Bool() (bool, bool) { return v.flag, v.kind == specBool }

// IsZero reports whether v holds nothing.
func (v SpecValue) IsZero() bool { return v.kind == specNone }

// String returns the value as its JSON text would read: the text itself,
// the number, "true" or "false"; "" when v holds nothing.
func (v SpecValue) String() string {
	switch v.kind {
	case specText:
		return v.text
	case specNumber:
		return strconv.FormatFloat(v.number, 'g', -1, 64)
	case specBool:
		return strconv.FormatBool(v.flag)
	}
	return ""
}

// MarshalJSON writes the value as a plain JSON string, number or bool;
// an empty SpecValue is null.
func (v SpecValue) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case specText:
		return json.Marshal(v.text)
	case specNumber:
		return json.Marshal(v.number)
	case specBool:
		return json.Marshal(v.flag)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads a JSON string, number or bool.
func (v *SpecValue) UnmarshalJSON(b []byte) error {
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("spec value: %w", err)
	}
	switch x := raw.(type) {
	case string:
		*v = TextValue(x)
	case float64:
		*v = NumberValue(x)
	case bool:
		*v = BoolValue(x)
	default:
		return fmt.Errorf("spec value %s is not a string, a number or a bool", b)
	}
	return nil
}
