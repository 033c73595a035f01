package localapi

import (
	"context"
	"net/http"
)

// ShutdownNode asks the host to shut the node down (see ShutdownFunc) and
// waits for the answer; give ctx room for the host's shutdown grace period.
func (c *Client) ShutdownNode(ctx context.Context) (ShutdownResult, error) {
	var out ShutdownResult
	return out, c.call(ctx, http.MethodPost, "/v1/node/shutdown", nil, nil, &out)
}
