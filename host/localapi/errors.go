package localapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Errors a Pods or Events implementation wraps to choose the answer.
var (
	ErrNotFound    = errors.New("not found")
	ErrConflict    = errors.New("conflict")
	ErrUnavailable = errors.New("unavailable")
)

// errBadRequest marks the server's own 400 answers.
var errBadRequest = errors.New("bad request")

// errorStatus chooses the status code and body for err.
func errorStatus(err error) (int, ErrorBody) {
	body := ErrorBody{Error: err.Error()}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, ErrorBody{Error: fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit)}
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest, body
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, body
	case errors.Is(err, ErrConflict):
		return http.StatusConflict, body
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable, body
	}
	if fields := fieldErrors(err); len(fields) > 0 {
		body.Fields = fields
		return http.StatusUnprocessableEntity, body
	}
	return http.StatusInternalServerError, body
}

// fieldErrors collects every *field.Error in err's tree, and the other
// leaves beside them, so nothing a 422 says is lost.
func fieldErrors(err error) []FieldError {
	var out []FieldError
	var leaves []error
	var walk func(error)
	walk = func(err error) {
		if fe, ok := err.(*field.Error); ok {
			out = append(out, FieldError{Field: fe.Field, Message: fe.ErrorBody()})
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			if e := u.Unwrap(); e != nil {
				walk(e)
			} else {
				leaves = append(leaves, err)
			}
		default:
			leaves = append(leaves, err)
		}
	}
	walk(err)
	if len(out) == 0 {
		return nil
	}
	for _, l := range leaves {
		out = append(out, FieldError{Message: l.Error()})
	}
	return out
}

// badParam is the 400 for a query parameter.
func badParam(name, value, why string) error {
	return fmt.Errorf("%w: query parameter %q: %q %s", errBadRequest, name, value, why)
}

// APIError is an error answer as the client sees it.
type APIError struct {
	// StatusCode is the HTTP status code.
	StatusCode int
	Message    string
	Fields     []FieldError
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	for _, f := range e.Fields {
		b.WriteString("\n  ")
		if f.Field != "" {
			b.WriteString(f.Field + ": ")
		}
		b.WriteString(f.Message)
	}
	return b.String()
}

// Is lets callers test a client error with the server's sentinels.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrConflict:
		return e.StatusCode == http.StatusConflict
	case ErrUnavailable:
		return e.StatusCode == http.StatusServiceUnavailable
	}
	return false
}
