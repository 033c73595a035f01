package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/sdk"
)

// driverConn is the connection to one CSI driver. It caches what the driver
// says of itself (GetPluginInfo, NodeGetInfo, NodeGetCapabilities) and
// fetches it again once the connection was lost, since the process that
// answers afterwards may be a restarted, different driver. Every call gets
// the driver's deadline.
type driverConn struct {
	cfg      driver
	conn     *grpc.ClientConn
	identity csi.IdentityClient
	node     csi.NodeClient

	// epoch grows each time the connection leaves READY.
	epoch atomic.Uint64
	stop  context.CancelFunc

	mu    sync.Mutex
	facts *driverFacts // nil until fetched
}

// driverFacts is what the driver said of itself, at one epoch.
type driverFacts struct {
	epoch   uint64
	name    string
	version string
	nodeID  string
	// maxVolumes and topology are the rest of NodeGetInfo's answer.
	maxVolumes int64
	topology   map[string]string
	caps       map[csi.NodeServiceCapability_RPC_Type]bool
}

func (f *driverFacts) has(c csi.NodeServiceCapability_RPC_Type) bool { return f.caps[c] }

// dialDriver prepares the connection to d; it connects on first use.
func dialDriver(d driver) (*driverConn, error) {
	path, err := sdk.UnixSocketPath(d.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("csi driver %q: %w", d.Name, err)
	}
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("csi driver %q at %s: %w", d.Name, d.Endpoint, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	dc := &driverConn{cfg: d, conn: conn, identity: csi.NewIdentityClient(conn), node: csi.NewNodeClient(conn), stop: stop}
	go dc.watch(ctx)
	return dc, nil
}

// watch bumps epoch each time the connection leaves READY, until ctx ends.
// A driver that restarts takes the connection out of READY, so facts
// fetched before carry an older epoch. (A READY period too short to be
// seen between two state reads is too short to fetch facts in.)
func (dc *driverConn) watch(ctx context.Context) {
	for {
		s := dc.conn.GetState()
		if !dc.conn.WaitForStateChange(ctx, s) {
			return
		}
		if s == connectivity.Ready {
			dc.epoch.Add(1)
		}
	}
}

// close releases the connection and its watcher.
func (dc *driverConn) close() {
	dc.stop()
	_ = dc.conn.Close()
}

// call runs f with a context bounded by the driver's timeout and wraps its
// error for the contract. A lost connection invalidates the cached facts.
func (dc *driverConn) call(ctx context.Context, rpc string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, dc.cfg.timeout())
	defer cancel()
	err := f(ctx)
	if err == nil {
		return nil
	}
	if status.Code(err) == codes.Unavailable {
		dc.epoch.Add(1)
	}
	return fromCSI(dc.cfg.Name, rpc, err)
}

// ask is call for an RPC with an answer.
func ask[T any](ctx context.Context, dc *driverConn, rpc string, f func(ctx context.Context) (T, error)) (T, error) {
	var resp T
	err := dc.call(ctx, rpc, func(ctx context.Context) (err error) {
		resp, err = f(ctx)
		return err
	})
	return resp, err
}

// pluginInfo asks the driver who it is.
func (dc *driverConn) pluginInfo(ctx context.Context) (*csi.GetPluginInfoResponse, error) {
	return ask(ctx, dc, "GetPluginInfo", func(ctx context.Context) (*csi.GetPluginInfoResponse, error) {
		return dc.identity.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	})
}

// current returns the cached facts if they were fetched in this epoch. (The
// connection's state is no test: it may still say CONNECTING after calls
// went through.)
func (dc *driverConn) current() *driverFacts {
	if dc.facts != nil && dc.facts.epoch == dc.epoch.Load() {
		return dc.facts
	}
	return nil
}

// getFacts returns the driver's facts, fetching them when the cache is not
// current.
func (dc *driverConn) getFacts(ctx context.Context) (*driverFacts, error) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if f := dc.current(); f != nil {
		return f, nil
	}
	f, err := dc.fetch(ctx, dc.epoch.Load())
	if err != nil {
		return nil, err
	}
	dc.facts = f
	return f, nil
}

// fetch asks the driver who it is, on which node, and what it can do.
func (dc *driverConn) fetch(ctx context.Context, epoch uint64) (*driverFacts, error) {
	f := &driverFacts{epoch: epoch, caps: map[csi.NodeServiceCapability_RPC_Type]bool{}}
	info, err := dc.pluginInfo(ctx)
	if err != nil {
		return nil, err
	}
	f.name, f.version = info.GetName(), info.GetVendorVersion()
	if f.name != dc.cfg.Name {
		return nil, fmt.Errorf("csi driver %q at %s: GetPluginInfo names it %q: %w", dc.cfg.Name, dc.cfg.Endpoint, f.name, errBadAnswer)
	}
	node, err := ask(ctx, dc, "NodeGetInfo", func(ctx context.Context) (*csi.NodeGetInfoResponse, error) {
		return dc.node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	})
	if err != nil {
		return nil, err
	}
	if f.nodeID = node.GetNodeId(); f.nodeID == "" {
		return nil, fmt.Errorf("csi driver %q: NodeGetInfo without node_id: %w", dc.cfg.Name, errBadAnswer)
	}
	f.maxVolumes, f.topology = node.GetMaxVolumesPerNode(), node.GetAccessibleTopology().GetSegments()
	caps, err := ask(ctx, dc, "NodeGetCapabilities", func(ctx context.Context) (*csi.NodeGetCapabilitiesResponse, error) {
		return dc.node.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{})
	})
	if err != nil {
		return nil, err
	}
	for _, c := range caps.GetCapabilities() {
		// Entries without an RPC type (another capability kind, or
		// garbage) are not ours to read.
		if rpc := c.GetRpc(); rpc != nil {
			f.caps[rpc.GetType()] = true
		}
	}
	return f, nil
}

// check tells whether the driver answers as the cached facts say; a driver
// whose GetPluginInfo changed was replaced, and its facts are fetched again.
func (dc *driverConn) check(ctx context.Context) error {
	f, err := dc.getFacts(ctx)
	if err != nil {
		return err
	}
	info, err := dc.pluginInfo(ctx)
	if err != nil {
		return err
	}
	if info.GetName() != f.name || info.GetVendorVersion() != f.version {
		dc.mu.Lock()
		if dc.facts == f {
			dc.facts = nil
		}
		dc.mu.Unlock()
		_, err = dc.getFacts(ctx)
	}
	return err
}

// drivers is the set of connections of one config.
type drivers map[string]*driverConn

// connect opens a connection per driver of c, reusing those of old whose
// config did not change; it returns the connections of old no longer used.
func connect(c config, old drivers) (drivers, []*driverConn, error) {
	next := drivers{}
	for _, d := range c.Drivers {
		if dc, ok := old[d.Name]; ok && dc.cfg == d {
			next[d.Name] = dc
			continue
		}
		dc, err := dialDriver(d)
		if err != nil {
			for _, dc := range next {
				if old[dc.cfg.Name] != dc {
					dc.close()
				}
			}
			return nil, nil, err
		}
		next[d.Name] = dc
	}
	var unused []*driverConn
	for name, dc := range old {
		if next[name] != dc {
			unused = append(unused, dc)
		}
	}
	return next, unused, nil
}
