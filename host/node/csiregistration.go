package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/podhost/podhost/host/csinode"
	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/pluginregistration"
	"github.com/podhost/podhost/host/supervisor"
)

// newPluginRegistration builds the watcher of the registration directory,
// whose CSI drivers go to the volume plugins (csiDrivers).
func (n *Node) newPluginRegistration() {
	dir := n.cfg.PluginRegistrationDir
	if dir == "" {
		dir = filepath.Join(n.cfg.RootDir, pluginregistration.DefaultDirName)
	}
	n.registration = pluginregistration.New(pluginregistration.Config{
		Dir: dir, Handler: csiDrivers{n}, Log: n.log.Named("plugin-registration"),
		Record: func(typ, reason, msg string) {
			n.events.Record(events.Object{Kind: events.KindNode, Name: n.cfg.NodeName}, typ, reason, msg)
		},
	})
}

// runPluginRegistration serves the registration directory until ctx ends.
func (n *Node) runPluginRegistration(ctx context.Context) {
	if err := n.registration.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		n.log.Error("plugin registration stopped", "err", err)
	}
}

// resyncPluginRegistration registers the run-time CSI drivers again once
// the plugin that serves them restarted without them.
func (n *Node) resyncPluginRegistration(ev supervisor.Event) {
	if ev.Type != supervisor.EventRestarted {
		return
	}
	if name, err := n.volumePlugins.CSIRegistrationPlugin(); err == nil && name == ev.Plugin {
		n.registration.Resync()
	}
}

// csiDrivers is the registration watcher's Handler: a driver goes to the
// volume plugin that takes registered drivers and, in Kubernetes mode,
// into the node's CSINode and labels once the Node is registered
// (host/csinode); when that fails the plugin forgets the driver again.
type csiDrivers struct{ n *Node }

func (c csiDrivers) Register(ctx context.Context, name, endpoint string) error {
	info, err := c.n.volumePlugins.RegisterCSIDriver(ctx, name, endpoint)
	if err != nil || c.n.kube == nil {
		return err
	}
	err = c.waitNodeRegistered(ctx)
	if err == nil {
		err = csinode.New(c.n.cfg.Kubernetes.Client, c.n.cfg.NodeName).Install(ctx, csinode.Driver{
			Name: name, NodeID: info.NodeID, MaxVolumes: info.MaxVolumes, Topology: info.Topology,
		})
	}
	if err != nil {
		if derr := c.n.volumePlugins.DeregisterCSIDriver(context.WithoutCancel(ctx), name); derr != nil {
			c.n.log.Warn("forgetting a csi driver whose CSINode entry failed", "driver", name, "err", derr)
		}
		return fmt.Errorf("csinode: %w", err)
	}
	return nil
}

// waitNodeRegistered waits until the node agent registered the Node,
// which the CSINode's owner reference and the labels need.
func (c csiDrivers) waitNodeRegistered(ctx context.Context) error {
	select {
	case <-c.n.kube.agent.agent.Registered():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("node %s not registered yet: %w", c.n.cfg.NodeName, ctx.Err())
	}
}

func (c csiDrivers) Deregister(ctx context.Context, name string) error {
	err := c.n.volumePlugins.DeregisterCSIDriver(ctx, name)
	if c.n.kube != nil {
		err = errors.Join(err, csinode.New(c.n.cfg.Kubernetes.Client, c.n.cfg.NodeName).Uninstall(ctx, name))
	}
	return err
}
