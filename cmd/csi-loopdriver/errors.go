package main

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The driver's logic fails with these, wrapped with %w; grpcError turns
// them into the CSI codes at the gRPC edge.
var (
	errInvalid      = errors.New("invalid argument")
	errNotFound     = errors.New("not found")
	errExists       = errors.New("already exists with other properties")
	errPrecondition = errors.New("failed precondition")
	errOutOfRange   = errors.New("out of range")
	errBusy         = errors.New("an operation is pending for the volume")
)

// grpcError is the one translation of a logic error into a gRPC status.
func grpcError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	code := codes.Internal
	switch {
	case errors.Is(err, errInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, errNotFound):
		code = codes.NotFound
	case errors.Is(err, errExists):
		code = codes.AlreadyExists
	case errors.Is(err, errPrecondition):
		code = codes.FailedPrecondition
	case errors.Is(err, errOutOfRange):
		code = codes.OutOfRange
	case errors.Is(err, errBusy):
		code = codes.Aborted
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	}
	return status.Error(code, err.Error())
}
