// Package volumeerr owns the error rule of the volume contract
// (proto/volume/v1, stated at the top of volume.proto): which failed calls
// are final, uncertain or transient. The host classifies every error of a
// volume plugin call with Classify; the sdk re-exports it for plugins and
// their tests. It imports only gRPC's status package and the ErrorInfo
// detail of google.rpc.
package volumeerr

import (
	"errors"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
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

// Domain and ReasonNotAttempted name the google.rpc.ErrorInfo detail of a
// status that a plugin answers when it failed before it attempted
// anything of the call against its backend (asking the backend what it
// can do, reading secrets): such a call is transient, like one that never
// reached the plugin, whatever its code.
const (
	Domain             = "volume.podhost.io"
	ReasonNotAttempted = "NOT_ATTEMPTED"
)

// NotAttempted is the status of a call that failed before the plugin
// attempted it against its backend: code and msg as the failure has them,
// with the NOT_ATTEMPTED detail that makes Classify call it Transient.
func NotAttempted(code codes.Code, msg string) error {
	st, err := status.New(code, msg).WithDetails(&errdetails.ErrorInfo{Reason: ReasonNotAttempted, Domain: Domain})
	if err != nil {
		return status.Error(code, msg)
	}
	return st.Err()
}

// notAttempted reports whether st carries the NOT_ATTEMPTED detail.
func notAttempted(st *status.Status) bool {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == Domain && info.GetReason() == ReasonNotAttempted {
			return true
		}
	}
	return false
}

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
// be nil. An error that wraps ErrNotSent, or a status with the
// NOT_ATTEMPTED detail (NotAttempted), is Transient; one without a gRPC
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
	if notAttempted(withStatus.GRPCStatus()) {
		return Transient
	}
	if uncertainCodes[withStatus.GRPCStatus().Code()] {
		return Uncertain
	}
	return Final
}
