package crisetup

import (
	"context"
	"errors"
	"fmt"
)

// Restart stops containerd gracefully and starts it again on the same
// config, root, state and socket, as an operator's restart of the service
// does: the shims and the containers under them keep running, and
// containerd adopts them again. whileDown, when not nil, runs between the
// stop and the start. The CRI clients reconnect by themselves.
func (c *Containerd) Restart(ctx context.Context, whileDown func()) error {
	if c.bin == "" {
		return errors.New("restart: only an instance started by this process can be restarted")
	}
	if err := c.terminate(); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if whileDown != nil {
		whileDown()
	}
	if err := c.launch(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}
