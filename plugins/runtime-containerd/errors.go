package main

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Errors of the logic. Each CRI error is classified once, by criError, into
// one of these; server.go maps them to the contract's codes in toStatus.
var (
	errInvalid      = errors.New("invalid argument")
	errNotFound     = errors.New("not found")
	errPrecondition = errors.New("not allowed in this state")
	errUnavailable  = errors.New("containerd unavailable")
	errDeadline     = errors.New("deadline exceeded")
	// errBackend is any other failure containerd reports (the contract's
	// UNKNOWN: it may have taken effect).
	errBackend = errors.New("containerd failed")
)

// backendError is an error containerd answered, classified. It reads
// "op: containerd's message" and unwraps to its class.
type backendError struct {
	op    string
	class error
	msg   string
}

func (e *backendError) Error() string { return e.op + ": " + e.msg }
func (e *backendError) Unwrap() error { return e.class }

// criError classifies err, returned by the CRI call op, into one of the
// logic's errors. containerd 1.6 does not always use the gRPC code that
// fits: some lookups fail with UNKNOWN and a message that ends with its
// errdefs suffix ": not found", which is taken as NOT_FOUND. Other UNKNOWN
// messages that merely contain "not found" (a missing executable in a
// container, say) stay UNKNOWN.
func criError(op string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		class := errBackend
		if errors.Is(err, context.DeadlineExceeded) {
			class = errDeadline
		}
		return &backendError{op: op, class: class, msg: err.Error()}
	}
	return &backendError{op: op, class: classOf(st.Code(), st.Message()), msg: st.Message()}
}

// classOf is the class of a CRI answer with code and message.
func classOf(code codes.Code, msg string) error {
	switch code {
	case codes.NotFound:
		return errNotFound
	case codes.InvalidArgument:
		return errInvalid
	case codes.FailedPrecondition:
		return errPrecondition
	case codes.Unavailable:
		return errUnavailable
	case codes.DeadlineExceeded:
		return errDeadline
	case codes.Unknown:
		if msg == "not found" || strings.HasSuffix(msg, ": not found") {
			return errNotFound
		}
	}
	return errBackend
}

// isNotFound reports whether err says the object does not exist.
func isNotFound(err error) bool { return errors.Is(err, errNotFound) }

// mayHaveTakenEffect reports whether a changing call that failed with err
// may have changed something all the same.
func mayHaveTakenEffect(err error) bool {
	return !errors.Is(err, errNotFound) && !errors.Is(err, errInvalid) && !errors.Is(err, errPrecondition)
}

// isUncertainTransport reports whether err says containerd could not be
// asked at all, so that asking again for a status is pointless.
func isUncertainTransport(err error) bool {
	return errors.Is(err, errUnavailable) || errors.Is(err, errDeadline)
}
