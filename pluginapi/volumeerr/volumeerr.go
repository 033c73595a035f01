// Package volumeerr owns the error rule of the volume contract
// (proto/volume/v1, stated at the top of volume.proto): which failed calls
// are final, uncertain or transient. The host classifies every error of a
// volume plugin call with Classify; the sdk re-exports it for plugins and
// their tests. It imports only gRPC's status package.
package volumeerr

import (
	"errors"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Class is what a failed volume call means for the host's state.
type Class int

const (
	// Final: the call finished without effect and left nothing behind. It
	// clears an uncertain state (unless reconstruction found the state).
	Final Class = iota
	// Uncertain: the call may still be running or may have taken effect in
	// part; the host records the mount as uncertain and tears it down with
	// Unpublish and Unstage.
	Uncertain
	// Transient: the call never reached the plugin; no state changes and
	// the host retries.
	Transient
)

func (c Class) String() string {
	switch c {
	case Final:
		return "final"
	case Uncertain:
		return "uncertain"
	case Transient:
		return "transient"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// ErrNotSent marks an error for a call that never reached the plugin (the
// plugin was not running, or the host refused the call before sending it).
// The host wraps it with %w; Classify calls such an error Transient.
var ErrNotSent = errors.New("volume call not sent to the plugin")

// uncertainCodes are the gRPC codes after which the call may have taken
// effect. Every other code is final.
var uncertainCodes = map[codes.Code]bool{
	codes.Canceled:          true,
	codes.DeadlineExceeded:  true,
	codes.Unavailable:       true,
	codes.ResourceExhausted: true,
	codes.Aborted:           true,
}

// Classify returns the class of err, the error of a volume call; it must not
// be nil. An error that wraps ErrNotSent is Transient; one without a gRPC
// status (a broken connection, an answer that could not be read, a context
// error) is Uncertain; a status is Uncertain for the codes of the rule and
// Final for every other code, OK included (a nil status error cannot be
// told apart from success).
func Classify(err error) Class {
	if errors.Is(err, ErrNotSent) {
		return Transient
	}
	var withStatus interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &withStatus) {
		return Uncertain
	}
	if uncertainCodes[withStatus.GRPCStatus().Code()] {
		return Uncertain
	}
	return Final
}
