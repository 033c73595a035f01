package volumeerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"CANCELLED", status.Error(codes.Canceled, "x"), Uncertain},
		{"DEADLINE_EXCEEDED", status.Error(codes.DeadlineExceeded, "x"), Uncertain},
		{"UNAVAILABLE", status.Error(codes.Unavailable, "x"), Uncertain},
		{"RESOURCE_EXHAUSTED", status.Error(codes.ResourceExhausted, "x"), Uncertain},
		{"ABORTED", status.Error(codes.Aborted, "x"), Uncertain},
		{"UNKNOWN", status.Error(codes.Unknown, "x"), Final},
		{"INVALID_ARGUMENT", status.Error(codes.InvalidArgument, "x"), Final},
		{"NOT_FOUND", status.Error(codes.NotFound, "x"), Final},
		{"ALREADY_EXISTS", status.Error(codes.AlreadyExists, "x"), Final},
		{"PERMISSION_DENIED", status.Error(codes.PermissionDenied, "x"), Final},
		{"FAILED_PRECONDITION", status.Error(codes.FailedPrecondition, "x"), Final},
		{"OUT_OF_RANGE", status.Error(codes.OutOfRange, "x"), Final},
		{"UNIMPLEMENTED", status.Error(codes.Unimplemented, "x"), Final},
		{"INTERNAL", status.Error(codes.Internal, "x"), Final},
		{"DATA_LOSS", status.Error(codes.DataLoss, "x"), Final},
		{"UNAUTHENTICATED", status.Error(codes.Unauthenticated, "x"), Final},
		{"code out of range", status.Error(codes.Code(99), "x"), Final},
		{"wrapped final status", fmt.Errorf("stage: %w", status.Error(codes.InvalidArgument, "x")), Final},
		{"wrapped uncertain status", fmt.Errorf("stage: %w", status.Error(codes.Aborted, "x")), Uncertain},
		{"no status", errors.New("connection reset"), Uncertain},
		{"not attempted, final code", NotAttempted(codes.Internal, "probe failed"), Transient},
		{"not attempted, uncertain code", fmt.Errorf("stage: %w", NotAttempted(codes.Unavailable, "probe failed")), Transient},
		{"a detail of another domain", otherDetail(), Final},
		{"bare context deadline", context.DeadlineExceeded, Uncertain},
		{"EOF", io.EOF, Uncertain},
		{"not sent", fmt.Errorf("plugin %q: %w", "volume-csi", ErrNotSent), Transient},
		{"not sent, with a status", fmt.Errorf("%w: %w", ErrNotSent, status.Error(codes.Unavailable, "x")), Transient},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("%s: Classify(%v) = %v; want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestClassString(t *testing.T) {
	for c, want := range map[Class]string{Final: "final", Uncertain: "uncertain", Transient: "transient", Class(7): "Class(7)"} {
		if got := c.String(); got != want {
			t.Errorf("Class(%d).String() = %q; want %q", int(c), got, want)
		}
	}
}

func otherDetail() error {
	st, _ := status.New(codes.Internal, "x").WithDetails(&errdetails.ErrorInfo{Reason: ReasonNotAttempted, Domain: "example.com"})
	return st.Err()
}
