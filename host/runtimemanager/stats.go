package runtimemanager

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ErrNoStats: the runtime plugin does not serve ListStats (it answered
// UNIMPLEMENTED).
var ErrNoStats = errors.New("the runtime plugin does not serve stats")

// ListStats asks the runtime for the usage of its sandboxes and
// containers (host/nodestats calls it every 10 s).
func (m *Manager) ListStats(ctx context.Context) (*runtimev1.ListStatsResponse, error) {
	resp, err := m.rt.ListStats(ctx, &runtimev1.ListStatsRequest{})
	if status.Code(err) == codes.Unimplemented {
		return nil, fmt.Errorf("%w: %w", ErrNoStats, err)
	}
	if err != nil {
		return nil, fmt.Errorf("listing stats: %w", err)
	}
	return resp, nil
}
