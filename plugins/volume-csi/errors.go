package main

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/sdk"
)

// Sentinels of the plugin's own failures; toStatus gives each its code.
var (
	// errInvalid: a required argument is missing or malformed.
	errInvalid = errors.New("invalid argument")
	// errUnknownDriver: the volume names a driver the config does not list.
	errUnknownDriver = errors.New("unknown CSI driver")
	// errSecrets: the secrets directory the volume names cannot be read.
	errSecrets = errors.New("cannot read secrets")
	// errNoMetrics: the volume's driver does not serve NodeGetVolumeStats.
	errNoMetrics = errors.New("driver has no volume stats")
	// errBadAnswer: the driver answered something unusable.
	errBadAnswer = errors.New("unusable answer from CSI driver")
	// errNotConfigured: a call came before Configure.
	errNotConfigured = errors.New("plugin not configured")
	// errNotAttempted wraps a failure before the call was attempted
	// against the driver (its facts, the secrets): transient for the host.
	errNotAttempted = errors.New("not attempted")
)

// driverError is a failed CSI call, with the contract code it maps to.
type driverError struct {
	code codes.Code
	err  error
}

func (e *driverError) Error() string { return e.err.Error() }
func (e *driverError) Unwrap() error { return e.err }

// contractCodes maps each CSI code a node RPC returns to the contract code
// the plugin answers. Their classes agree code for code (proto/volume/v1
// states the rule; the kubelet classifies CSI node errors the same way), so
// the mapping keeps the code; it is written out so that a change of either
// side shows here. A code missing from the table is UNKNOWN, which is final.
var contractCodes = map[codes.Code]codes.Code{
	codes.Canceled:           codes.Canceled,
	codes.Unknown:            codes.Unknown,
	codes.InvalidArgument:    codes.InvalidArgument,
	codes.DeadlineExceeded:   codes.DeadlineExceeded,
	codes.NotFound:           codes.NotFound,
	codes.AlreadyExists:      codes.AlreadyExists,
	codes.PermissionDenied:   codes.PermissionDenied,
	codes.ResourceExhausted:  codes.ResourceExhausted,
	codes.FailedPrecondition: codes.FailedPrecondition,
	codes.Aborted:            codes.Aborted,
	codes.OutOfRange:         codes.OutOfRange,
	codes.Unimplemented:      codes.Unimplemented,
	codes.Internal:           codes.Internal,
	codes.Unavailable:        codes.Unavailable,
	codes.DataLoss:           codes.DataLoss,
	codes.Unauthenticated:    codes.Unauthenticated,
}

// fromCSI wraps the error of the CSI call rpc to driver name. A status maps
// through contractCodes; an error without one (the call may have been sent)
// is uncertain: DEADLINE_EXCEEDED or CANCELLED when ctx ended, UNAVAILABLE
// otherwise.
func fromCSI(name, rpc string, err error) error {
	code := codes.Unavailable
	if s, ok := status.FromError(err); ok {
		var known bool
		if code, known = contractCodes[s.Code()]; !known {
			code = codes.Unknown
		}
	} else if errors.Is(err, context.DeadlineExceeded) {
		code = codes.DeadlineExceeded
	} else if errors.Is(err, context.Canceled) {
		code = codes.Canceled
	}
	return &driverError{code: code, err: fmt.Errorf("csi driver %q: %s: %w", name, rpc, err)}
}

// toStatus is the one translation of the plugin's errors to the contract's
// codes; a failure before the call was attempted carries the contract's
// NOT_ATTEMPTED detail (transient) besides its code. An error of unknown origin is ABORTED: the plugin cannot tell
// whether the call took effect, and the host must treat it as uncertain.
func toStatus(err error) error {
	var de *driverError
	code := codes.Aborted
	switch {
	case errors.As(err, &de):
		code = de.code
	case errors.Is(err, errInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, errUnknownDriver), errors.Is(err, errSecrets), errors.Is(err, errNotConfigured):
		code = codes.FailedPrecondition
	case errors.Is(err, errNoMetrics):
		code = codes.Unimplemented
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	}
	if errors.Is(err, errNotAttempted) {
		return sdk.NotAttemptedVolumeError(code, err.Error())
	}
	return status.Error(code, err.Error())
}
