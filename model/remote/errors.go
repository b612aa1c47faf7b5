package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Kind names what sort of failure a request met, for metrics and for
// operators reading a turn's trace.
type Kind string

// The kinds of failure. KindOK is an attempt that succeeded.
const (
	KindOK          Kind = "ok"
	KindUnreachable Kind = "unreachable"  // nothing answered: refused, no route, unknown host
	KindReset       Kind = "reset"        // the connection broke during the exchange
	KindTimeout     Kind = "timeout"      // no headers, or a silent stream, within the timeout
	KindRateLimited Kind = "rate_limited" // 429
	KindServerError Kind = "server_error" // 5xx, or an error the server sent inside a 200
	KindRejected    Kind = "rejected"     // another 4xx: the request itself was refused
	KindMalformed   Kind = "malformed"    // the answer could not be read
	KindCanceled    Kind = "canceled"     // the caller gave up
	KindFailed      Kind = "failed"       // anything else
	// KindOutputRejected is an answer the model generated but the server's
	// own tool-call parser refused: the request was fine, and sent again
	// unchanged it decodes the same answer, so it is not retried; a caller
	// may ask again with changed messages.
	KindOutputRejected Kind = "output_rejected"
)

// Error is a request that failed for good: its kind, how many attempts were
// made, and the last attempt's error.
type Error struct {
	Kind     Kind
	Attempts int
	Err      error
}

// Error names the last failure, then its kind and the attempts.
func (e *Error) Error() string {
	s := "attempt"
	if e.Attempts != 1 {
		s = "attempts"
	}
	return fmt.Sprintf("%v [%s after %d %s]", e.Err, e.Kind, e.Attempts, s)
}

// Unwrap returns the last attempt's error.
func (e *Error) Unwrap() error { return e.Err }

// ErrorKind classifies err: the Kind of an *Error, or that of a failure of
// this client or of the network it wraps.
func ErrorKind(err error) Kind {
	if err == nil {
		return KindOK
	}
	var re *Error
	if errors.As(err, &re) {
		return re.Kind
	}
	var apiErr *APIError
	var malformed *malformedError
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &apiErr):
		switch s := apiErr.StatusCode; {
		case apiErr.outputRejected():
			return KindOutputRejected
		case s == http.StatusTooManyRequests:
			return KindRateLimited
		case s == http.StatusRequestTimeout:
			return KindTimeout
		case s >= 500 || s == 0 || s == http.StatusOK:
			return KindServerError
		default:
			return KindRejected
		}
	case errors.As(err, &malformed):
		return KindMalformed
	case errors.Is(err, context.Canceled), errors.Is(err, errClosed):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, errHeaderTimeout), errors.Is(err, errIdleTimeout):
		return KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &dnsErr):
		return KindUnreachable
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF):
		return KindReset
	case errors.As(err, &netErr) && netErr.Timeout():
		return KindTimeout
	}
	return KindFailed
}

// malformedError marks an answer that could not be read: invalid JSON, a
// missing message, an oversized body.
type malformedError struct{ err error }

func (e *malformedError) Error() string { return e.err.Error() }
func (e *malformedError) Unwrap() error { return e.err }

// Attempt is one HTTP exchange with the server, as Config.OnAttempt sees it.
type Attempt struct {
	// Kind is KindOK, or what went wrong.
	Kind Kind
	// Status is the HTTP status, 0 when none arrived.
	Status int
	// Took is how long the exchange lasted: for a stream, until its end.
	Took time.Duration
	// Retry is true when another attempt follows this one.
	Retry bool
}
