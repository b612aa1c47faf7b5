package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
)

// decodeStrict decodes one JSON value into v, rejecting unknown fields
// and trailing data, so that a typo in a request is an error, not a no-op.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// fieldErr is a client error about one field of the request; the error
// handler writes it as {"error": …, "field": …}.
type fieldErr struct {
	code  int
	field string
	msg   string
}

func (e *fieldErr) Error() string { return e.field + ": " + e.msg }

// fieldError is a client error of the given status naming the field at fault.
func fieldError(code int, field, msg string) error {
	return &fieldErr{code: code, field: field, msg: msg}
}

// badRequest is a 400 naming the field at fault.
func badRequest(field, msg string) error { return fieldError(400, field, msg) }

// storeError maps the store's sentinel errors to HTTP statuses; what names
// the kind of thing that was looked up.
func storeError(err error, what string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fiber.NewError(fiber.StatusNotFound, "no such "+what)
	case errors.Is(err, store.ErrConflict):
		return fiber.NewError(fiber.StatusConflict, what+" was changed by someone else since you loaded it: reload and apply your edit again")
	}
	return err
}

// orEmpty makes a nil list encode as [] rather than null.
func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
