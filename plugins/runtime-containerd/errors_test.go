package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestErrorMapping follows an error from containerd's answer to the code
// the plugin gives the host.
func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name string
		err  error // as the CRI client returns it
		want codes.Code
	}{
		{"NOT_FOUND", status.Error(codes.NotFound, `an error occurred when try to find container "x": not found`), codes.NotFound},
		{"UNKNOWN ending in errdefs' not found", status.Error(codes.Unknown, `failed to resolve image "x": not found`), codes.NotFound},
		{"UNKNOWN that is just not found", status.Error(codes.Unknown, "not found"), codes.NotFound},
		{"UNKNOWN mentioning not found elsewhere", status.Error(codes.Unknown, `exec: "nope": executable file not found in $PATH: unknown`), codes.Unknown},
		{"UNAVAILABLE", status.Error(codes.Unavailable, "connection error: dial unix /c.sock: connect: connection refused"), codes.Unavailable},
		{"DEADLINE_EXCEEDED", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), codes.DeadlineExceeded},
		{"INVALID_ARGUMENT", status.Error(codes.InvalidArgument, "sandbox config must include metadata"), codes.InvalidArgument},
		{"FAILED_PRECONDITION", status.Error(codes.FailedPrecondition, "x"), codes.FailedPrecondition},
		{"CANCELED", status.Error(codes.Canceled, "context canceled"), codes.Unknown},
		{"ALREADY_EXISTS", status.Error(codes.AlreadyExists, "name reserved"), codes.Unknown},
		{"INTERNAL", status.Error(codes.Internal, "boom"), codes.Unknown},
		{"ttrpc closed", status.Error(codes.Unknown, "failed to kill container: ttrpc: closed: unknown"), codes.Unknown},
		{"a bare deadline", context.DeadlineExceeded, codes.DeadlineExceeded},
		{"a bare error", errors.New("eh"), codes.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := criError("stop container x", tt.err)
			got := toStatus(err)
			if status.Code(got) != tt.want {
				t.Errorf("got %v (%v); want %v", status.Code(got), got, tt.want)
			}
			if msg := status.Convert(got).Message(); msg != err.Error() || msg[:len("stop container x: ")] != "stop container x: " {
				t.Errorf("message: got %q; want the operation and containerd's message", msg)
			}
		})
	}
	if criError("x", nil) != nil {
		t.Error("criError(nil) is not nil")
	}
}

func TestToStatusOfTheLogicsErrors(t *testing.T) {
	tests := []struct {
		err  error
		want codes.Code
	}{
		{fmt.Errorf("%w: sandbox_id is required", errInvalid), codes.InvalidArgument},
		{fmt.Errorf("%w: image x is not present and the pull policy is Never", errNotFound), codes.NotFound},
		{fmt.Errorf("%w: start container x: it has exited", errPrecondition), codes.FailedPrecondition},
		{fmt.Errorf("%w: not configured", errUnavailable), codes.Unavailable},
		{fmt.Errorf("watch: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{errors.New("a bug"), codes.Internal},
	}
	for _, tt := range tests {
		if got := status.Code(toStatus(tt.err)); got != tt.want {
			t.Errorf("toStatus(%v): got %v; want %v", tt.err, got, tt.want)
		}
	}
}
