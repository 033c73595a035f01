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
	// ErrBadRequest is the client's error: a request the server could not
	// make sense of, such as a body that does not parse (see [BodyError]).
	ErrBadRequest = errors.New("bad request")
)

// errBadRequest marks the server's own 400 answers.
var errBadRequest = ErrBadRequest

// BodyError gives the errors of decoding and validating a request body
// their answer: 422 with every field when each problem is a *field.Error,
// 400 when some part of the body did not parse at all (truncated JSON or
// YAML, a value of the wrong JSON type, bytes that are no document), with
// the parser's message naming what it could not read.
func BodyError(err error) error {
	if _, others := problems(err); len(others) > 0 {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return err
}

// errorStatus chooses the status code and body for err.
func errorStatus(err error) (int, ErrorBody) {
	body := ErrorBody{Error: err.Error()}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, ErrorBody{Error: fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit)}
	case errors.Is(err, errBadRequest):
		body.Fields = fieldErrors(err)
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
	fields, leaves := problems(err)
	if len(fields) == 0 {
		return nil
	}
	out := make([]FieldError, 0, len(fields)+len(leaves))
	for _, fe := range fields {
		out = append(out, FieldError{Field: fe.Field, Message: fe.ErrorBody()})
	}
	for _, l := range leaves {
		out = append(out, FieldError{Message: l.Error()})
	}
	return out
}

// problems splits the leaves of err's tree into *field.Error values and
// the others.
func problems(err error) (fields []*field.Error, others []error) {
	var walk func(error)
	walk = func(err error) {
		if fe, ok := err.(*field.Error); ok {
			fields = append(fields, fe)
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
				others = append(others, err)
			}
		default:
			others = append(others, err)
		}
	}
	walk(err)
	return fields, others
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
	case ErrBadRequest:
		return e.StatusCode == http.StatusBadRequest
	}
	return false
}
