package sdk

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/pluginapi/volumeerr"
)

// VolumeErrorClass is the class of a failed volume call under the error rule
// of proto/volume/v1: VolumeFinal, VolumeUncertain or VolumeTransient. It is
// the contract's volumeerr.Class, re-exported so that a plugin can check
// that the codes it answers fall in the class it means.
type VolumeErrorClass = volumeerr.Class

// The classes of a failed volume call.
const (
	VolumeFinal     = volumeerr.Final
	VolumeUncertain = volumeerr.Uncertain
	VolumeTransient = volumeerr.Transient
)

// ClassifyVolumeError returns the class the host gives err, the error of a
// volume call as the host receives it.
func ClassifyVolumeError(err error) VolumeErrorClass { return volumeerr.Classify(err) }

// The errors a Volumes method wraps (with %w) to choose its answer's code.
// An error that wraps none of them, nor a context error, nor a gRPC status,
// is ABORTED: the SDK cannot tell whether the call took effect in part.
// When an error wraps several, an uncertain one wins.
var (
	// ErrInvalidArgument: the request is wrong (INVALID_ARGUMENT, final).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: the volume or path does not exist, e.g. GetMetrics of a
	// path that is not published (NOT_FOUND, final).
	ErrNotFound = errors.New("not found")
	// ErrNotStaged: Publish of a volume that is not staged at the staging
	// path (FAILED_PRECONDITION, final).
	ErrNotStaged = errors.New("volume is not staged")
	// ErrAlreadyExists: the path holds another volume, or the same volume
	// with other arguments (ALREADY_EXISTS, final).
	ErrAlreadyExists = errors.New("path holds another volume or other arguments")
	// ErrUncertain: the call may have taken effect in part (ABORTED,
	// uncertain). A context error (context.Canceled, DeadlineExceeded) is
	// uncertain too: CANCELLED or DEADLINE_EXCEEDED.
	ErrUncertain = errors.New("outcome uncertain")
)

// volumeStatus maps err, the error of a Volumes method, to the contract's
// status; nil stays nil.
func volumeStatus(err error) error {
	if err == nil {
		return nil
	}
	var withStatus interface{ GRPCStatus() *status.Status }
	code := codes.Aborted
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, ErrUncertain):
		code = codes.Aborted
	case errors.As(err, &withStatus):
		return withStatus.GRPCStatus().Err()
	case errors.Is(err, ErrInvalidArgument):
		code = codes.InvalidArgument
	case errors.Is(err, ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, ErrNotStaged):
		code = codes.FailedPrecondition
	case errors.Is(err, ErrAlreadyExists):
		code = codes.AlreadyExists
	}
	return status.Error(code, err.Error())
}

// NotAttemptedVolumeError is the status a plugin answers for a call that
// failed before it attempted anything against its backend (a capability
// probe, a secret read): the host classifies it VolumeTransient and
// changes no state, whatever code.
func NotAttemptedVolumeError(code codes.Code, msg string) error {
	return volumeerr.NotAttempted(code, msg)
}
