package supervisor

import (
	"context"

	"google.golang.org/grpc"

	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

// pluginConn is a grpc.ClientConnInterface that sends every call to the
// plugin's current instance. It stays valid across restarts; while no
// instance runs a call fails at once with ErrPluginExited,
// ErrPluginNotReady or ErrPluginRefused. Calls go through the instance's
// callGuard, so a call in flight when the plugin dies fails with
// ErrPluginExited.
type pluginConn struct {
	sup *supervisor
}

func (c pluginConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	inst, err := c.sup.current()
	if err != nil {
		return err
	}
	return inst.conn.Invoke(ctx, method, args, reply, opts...)
}

func (c pluginConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	inst, err := c.sup.current()
	if err != nil {
		return nil, err
	}
	return inst.conn.NewStream(ctx, desc, method, opts...)
}

// identityClient is an Identity client bound to one instance, for the
// supervisor's own probes.
func identityClient(inst *instance) pluginv1.IdentityClient {
	return pluginv1.NewIdentityClient(inst.conn)
}

var _ grpc.ClientConnInterface = pluginConn{}
