package prober

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/lifecycle"
)

// grpcProbe asks the standard health service at addr about service ("" is
// the server as a whole): SERVING is success, anything else, or no
// answer before ctx ends, a failure.
func grpcProbe(ctx context.Context, addr, service string) (lifecycle.ProbeResult, string, error) {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return lifecycle.ProbeUnknown, "", fmt.Errorf("grpc probe of %s: %w", addr, err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	switch {
	case status.Code(err) == codes.Unimplemented:
		return lifecycle.ProbeFailure, fmt.Sprintf("this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", status.Convert(err).Message()), nil
	case status.Code(err) == codes.DeadlineExceeded:
		return lifecycle.ProbeFailure, fmt.Sprintf("timeout: health rpc to %s did not complete", addr), nil
	case err != nil:
		return lifecycle.ProbeFailure, fmt.Sprintf("error: health rpc to %s failed: %v", addr, err), nil
	case resp.GetStatus() != healthpb.HealthCheckResponse_SERVING:
		return lifecycle.ProbeFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus()), nil
	}
	return lifecycle.ProbeSuccess, "", nil
}
