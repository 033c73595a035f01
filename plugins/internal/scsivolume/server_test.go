package scsivolume

import (
	"context"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// TestMetricsDeclared: a server whose metrics are off declares no
// supports_metrics and refuses GetMetrics without looking at the volume,
// with a code the host counts as a failure (not UNIMPLEMENTED), so that a
// host asking all the same shows.
func TestMetricsDeclared(t *testing.T) {
	tests := []struct {
		name     string
		metrics  func() bool
		wantCaps bool
		wantCode codes.Code
	}{
		{name: "default", wantCaps: true, wantCode: codes.NotFound},
		{name: "on", metrics: func() bool { return true }, wantCaps: true, wantCode: codes.NotFound},
		{name: "off", metrics: func() bool { return false }, wantCode: codes.FailedPrecondition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{Volumes: &Volumes{}, Metrics: tt.metrics}
			caps, err := s.GetCapabilities(context.Background(), &volumev1.GetCapabilitiesRequest{})
			if err != nil || caps.GetSupportsMetrics() != tt.wantCaps {
				t.Errorf("GetCapabilities: supports_metrics %v, %v; want %v", caps.GetSupportsMetrics(), err, tt.wantCaps)
			}
			_, err = s.GetMetrics(context.Background(), &volumev1.GetMetricsRequest{VolumeId: "v", VolumePath: filepath.Join(t.TempDir(), "missing")})
			if got := status.Code(err); got != tt.wantCode {
				t.Errorf("GetMetrics: %v (%v); want %v", got, err, tt.wantCode)
			}
		})
	}
}
