package pluginapi

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

// ProtocolVersion is the go-plugin protocol version of this contract. Bump it
// only for a wire-breaking change; it is negotiated at launch through
// go-plugin's VersionedPlugins.
const ProtocolVersion = 1

// ContractVersion is the version of the proto/<kind>/v1 services that this
// build speaks. A plugin lists the versions it speaks in GetInfo; the host
// refuses a plugin that does not list this one.
const ContractVersion = "v1"

// Handshake is the go-plugin handshake of every podhost plugin. The cookie
// only keeps a plugin binary from being started by hand by mistake; it is not
// a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "PODHOST_PLUGIN_COOKIE",
	MagicCookieValue: "4b1d9c0e-podhost-plugin",
}

// Kind is what a plugin provides. Its values are the names under which the
// plugin is dispensed through go-plugin and the `kind` of a host config
// entry.
type Kind string

// The plugin kinds.
const (
	KindRuntime Kind = "runtime"
	KindVolume  Kind = "volume"
)

// Kinds lists every kind, in a stable order.
var Kinds = []Kind{KindRuntime, KindVolume}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// Capability names a plugin lists in GetInfo.
const (
	// CapRuntimeEvents: the runtime serves the Events stream.
	CapRuntimeEvents = "runtime.events"
	// CapVolumeMetrics: the volume plugin serves GetMetrics.
	CapVolumeMetrics = "volume.metrics"
	// CapVolumeBlock: the volume plugin maps raw block volumes.
	CapVolumeBlock = "volume.block"
	// CapVolumeReconstruct: the volume plugin serves Reconstruct.
	CapVolumeReconstruct = "volume.reconstruct"
	// CapVolumeFC: the volume plugin serves the host's FC volumes
	// (kubernetes.io/fc); at most one plugin of a host may declare it.
	CapVolumeFC = "volume.fc"
	// CapVolumeISCSI: the volume plugin serves the host's iSCSI volumes
	// (kubernetes.io/iscsi); at most one plugin of a host may declare it.
	CapVolumeISCSI = "volume.iscsi"
	// CapVolumeCSIRegistration: the volume plugin serves RegisterDriver and
	// DeregisterDriver, taking the CSI drivers that register at run time;
	// at most one plugin of a host may declare it.
	CapVolumeCSIRegistration = "volume.csi.registration"
)

// GRPCPlugin carries a plugin's gRPC services over go-plugin. On the plugin
// side Register adds the services (Identity and the kind's service) to the
// server; on the host side Register is nil and GRPCClient hands back a *Conn.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Register func(*grpc.Server)
}

// Conn is what the host dispenses: the plugin's gRPC connection and a context
// that go-plugin cancels when the plugin process exits.
type Conn struct {
	*grpc.ClientConn
	// Done is cancelled when the plugin process exits.
	Done context.Context
}

// GRPCServer registers the plugin's services.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Register != nil {
		p.Register(s)
	}
	return nil
}

// GRPCClient wraps the connection go-plugin made to the plugin.
func (p *GRPCPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Conn{ClientConn: c, Done: ctx}, nil
}

// PluginSets is the VersionedPlugins map for a plugin of the given kind. The
// host passes nil for register; a plugin passes the function that registers
// its services.
func PluginSets(kind Kind, register func(*grpc.Server)) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {string(kind): &GRPCPlugin{Register: register}},
	}
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// protoKinds pairs each kind with its value in the Identity contract.
var protoKinds = map[Kind]pluginv1.Kind{
	KindRuntime: pluginv1.Kind_KIND_RUNTIME,
	KindVolume:  pluginv1.Kind_KIND_VOLUME,
}

// Proto is the kind as GetInfo answers it; KIND_UNSPECIFIED for an unknown
// kind.
func (k Kind) Proto() pluginv1.Kind { return protoKinds[k] }

// KindOf is the kind GetInfo answered; false for KIND_UNSPECIFIED or a
// value this build does not know.
func KindOf(p pluginv1.Kind) (Kind, bool) {
	for k, v := range protoKinds {
		if v == p {
			return k, true
		}
	}
	return "", false
}
