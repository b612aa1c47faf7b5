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

// Error codes are the stable names of API errors, written beside the
// English message as {"error": …, "code": …}; pages show the error in the
// merchant's language from the code (console/web/static/i18n.js), and
// clients branch on it rather than on the message's wording.
const (
	codeBadRequest      = "bad_request"      // a malformed request
	codeValidation      = "validation"       // a field's value is refused
	codeUnauthenticated = "unauthenticated"  // no valid session or token
	codeBadCredentials  = "bad_credentials"  // a login with a wrong username or password
	codeForbidden       = "forbidden"        // the role or origin may not do this
	codeNotFound        = "not_found"        // no such thing the caller sees
	codeConflict        = "conflict"         // changed by someone else since loaded
	codeTooLarge        = "too_large"        // a body or file over its limit
	codeUnsupportedType = "unsupported_type" // a body of a content type the route does not take
	codeRateLimited     = "rate_limited"     // too many attempts
	codeTimeout         = "timeout"          // the request did not arrive in time
	codeUnavailable     = "unavailable"      // the service cannot answer now
	codeInternal        = "internal"         // the server failed
	codeCatalogInvalid  = "catalog_invalid"  // a catalog with problems; nothing stored
	codeCatalogConflict = "catalog_conflict" // the catalog changed since the revision the edit was based on
)

// statusCode is the code of an error that names none: the kind its HTTP
// status says.
func statusCode(status int) string {
	switch status {
	case fiber.StatusBadRequest:
		return codeBadRequest
	case fiber.StatusUnauthorized:
		return codeUnauthenticated
	case fiber.StatusForbidden:
		return codeForbidden
	case fiber.StatusNotFound:
		return codeNotFound
	case fiber.StatusConflict:
		return codeConflict
	case fiber.StatusRequestTimeout:
		return codeTimeout
	case fiber.StatusRequestEntityTooLarge:
		return codeTooLarge
	case fiber.StatusUnsupportedMediaType:
		return codeUnsupportedType
	case fiber.StatusUnprocessableEntity:
		return codeValidation
	case fiber.StatusTooManyRequests:
		return codeRateLimited
	case fiber.StatusServiceUnavailable:
		return codeUnavailable
	}
	if status >= 500 {
		return codeInternal
	}
	return codeBadRequest
}

// fieldErr is a client error about one field of the request; the error
// handler writes it as {"error": …, "code": …, "field": …}.
type fieldErr struct {
	code    int
	errCode string
	field   string
	msg     string
}

func (e *fieldErr) Error() string { return e.field + ": " + e.msg }

// fieldError is a client error of the given status naming the field at
// fault; a 400 is a validation error, other statuses take their kind's code.
func fieldError(code int, field, msg string) error {
	errCode := statusCode(code)
	if code == fiber.StatusBadRequest {
		errCode = codeValidation
	}
	return &fieldErr{code: code, errCode: errCode, field: field, msg: msg}
}

// codedError is an error of the given status with its own stable code;
// field may be empty.
func codedError(status int, errCode, field, msg string) error {
	return &fieldErr{code: status, errCode: errCode, field: field, msg: msg}
}

// codedErr is an error with a stable code that names no field.
type codedErr struct {
	status  int
	errCode string
	msg     string
}

func (e *codedErr) Error() string { return e.msg }

// statusError is an error of the given status and code that names no field.
func statusError(status int, errCode, msg string) error {
	return &codedErr{status: status, errCode: errCode, msg: msg}
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
