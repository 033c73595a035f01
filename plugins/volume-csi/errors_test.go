package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/sdk"
)

// csiClasses is the kubelet's classification of CSI node errors (final or
// uncertain by gRPC code), which the contract's classes must reproduce.
var csiClasses = []struct {
	code codes.Code
	want sdk.VolumeErrorClass
}{
	{codes.Canceled, sdk.VolumeUncertain},
	{codes.DeadlineExceeded, sdk.VolumeUncertain},
	{codes.ResourceExhausted, sdk.VolumeUncertain},
	{codes.Aborted, sdk.VolumeUncertain},
	{codes.Unavailable, sdk.VolumeUncertain},
	{codes.Unknown, sdk.VolumeFinal},
	{codes.InvalidArgument, sdk.VolumeFinal},
	{codes.NotFound, sdk.VolumeFinal},
	{codes.AlreadyExists, sdk.VolumeFinal},
	{codes.PermissionDenied, sdk.VolumeFinal},
	{codes.FailedPrecondition, sdk.VolumeFinal},
	{codes.OutOfRange, sdk.VolumeFinal},
	{codes.Unimplemented, sdk.VolumeFinal},
	{codes.Internal, sdk.VolumeFinal},
	{codes.DataLoss, sdk.VolumeFinal},
	{codes.Unauthenticated, sdk.VolumeFinal},
	{codes.Code(42), sdk.VolumeFinal},
}

// TestCSICodesKeepTheirClass: every CSI code a driver answers reaches the
// host in the class the kubelet gives it.
func TestCSICodesKeepTheirClass(t *testing.T) {
	for _, tt := range csiClasses {
		err := toStatus(fromCSI("d.csi", "NodeStageVolume", status.Error(tt.code, "driver says no")))
		if got := sdk.ClassifyVolumeError(err); got != tt.want {
			t.Errorf("CSI %v: got %v (%v); want %v", tt.code, got, err, tt.want)
		}
	}
}

// TestCSICodesThroughTheDriver sends each code from a real driver socket.
func TestCSICodesThroughTheDriver(t *testing.T) {
	f := newFakeDriver("d.csi", stageCap)
	var code codes.Code
	f.hook = func(_ context.Context, method string) error {
		if method == "NodeStageVolume" {
			return status.Error(code, "injected")
		}
		return nil
	}
	tp := newTestPlugin(t, startDrivers(t, f)...)
	for _, tt := range csiClasses {
		code = tt.code
		_, err := tp.Stage(ctx(t), tp.stageReq("d.csi", "vol"))
		if got := sdk.ClassifyVolumeError(err); got != tt.want {
			t.Errorf("NodeStageVolume answering %v: Stage got %v (%v); want %v", tt.code, got, err, tt.want)
		}
	}
}

func TestLocalErrorsClass(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want codes.Code
	}{
		{"no status from the CSI call", fromCSI("d", "NodeStageVolume", errors.New("broken pipe")), codes.Unavailable},
		{"context deadline from the CSI call", fromCSI("d", "NodeStageVolume", context.DeadlineExceeded), codes.DeadlineExceeded},
		{"context cancel from the CSI call", fromCSI("d", "NodeStageVolume", fmt.Errorf("x: %w", context.Canceled)), codes.Canceled},
		{"missing argument", fmt.Errorf("%w: volume_id is required", errInvalid), codes.InvalidArgument},
		{"unknown driver", fmt.Errorf("%w %q", errUnknownDriver, "x"), codes.FailedPrecondition},
		{"secrets", fmt.Errorf("%w: /s", errSecrets), codes.FailedPrecondition},
		{"no metrics", errNoMetrics, codes.Unimplemented},
		{"bad answer", fmt.Errorf("x: %w", errBadAnswer), codes.Aborted},
		{"anything else", errors.New("disk full"), codes.Aborted},
	}
	for _, tt := range tests {
		if got := status.Code(toStatus(tt.err)); got != tt.want {
			t.Errorf("%s: got %v; want %v", tt.name, got, tt.want)
		}
	}
}
