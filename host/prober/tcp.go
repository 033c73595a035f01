package prober

import (
	"context"
	"net"

	"github.com/podhost/podhost/lifecycle"
)

// tcpProbe succeeds when a TCP connection to addr opens before ctx ends.
func tcpProbe(ctx context.Context, addr string) (lifecycle.ProbeResult, string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return lifecycle.ProbeFailure, "dial tcp " + addr + ": " + err.Error(), nil
	}
	conn.Close()
	return lifecycle.ProbeSuccess, "", nil
}
