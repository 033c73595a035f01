package node

import (
	"context"
	"errors"
	"path/filepath"

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
// volume plugin that takes registered drivers.
type csiDrivers struct{ n *Node }

func (c csiDrivers) Register(ctx context.Context, name, endpoint string) error {
	_, err := c.n.volumePlugins.RegisterCSIDriver(ctx, name, endpoint)
	return err
}

func (c csiDrivers) Deregister(ctx context.Context, name string) error {
	return c.n.volumePlugins.DeregisterCSIDriver(ctx, name)
}
