package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// FieldError is one problem in a plugin's config: the path of the field
// ("drivers[1].endpoint") and what is wrong with it.
type FieldError struct {
	Field   string
	Message string
}

// Error reads "field: message", or just the message for the config as a
// whole (an empty Field).
func (e FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Plugin describes a plugin to serve. Exactly one of Runtime, Volume and
// Volumes is set, matching Kind.
type Plugin struct {
	// Name of the implementation, e.g. "runtime-containerd".
	Name string
	// Version of the plugin itself.
	Version string
	Kind    Kind
	// Capabilities lists optional features (the Cap* constants). With
	// Volumes set, the SDK adds those its interfaces give; list only the
	// others (CapVolumeFC, CapVolumeISCSI).
	Capabilities []string
	// ContractVersions the plugin speaks; empty means the SDK's own
	// (ContractVersion).
	ContractVersions []string

	// Runtime is a runtime plugin's gRPC service.
	Runtime runtimev1.RuntimeServer
	// Volume is a volume plugin's gRPC service, for a plugin that speaks
	// proto/volume/v1 itself.
	Volume volumev1.VolumeServer
	// Volumes is a volume plugin's logic on plain Go types, which the SDK
	// serves as the Volume service: it checks the requests, maps the
	// errors and derives the capabilities (see Volumes).
	Volumes Volumes
	// OpaqueVolumeIDs makes the SDK pass Volumes any non-empty volume ID
	// (a CSI volume handle may hold slashes). Without it an ID that is not
	// a single clean path element is INVALID_ARGUMENT. A plugin that sets
	// it must never use an ID as a path.
	OpaqueVolumeIDs bool

	// Configure validates and applies the plugin's config, a JSON object.
	// It returns every problem found; a non-empty answer refuses the plugin
	// and must leave the previous config in effect. Nil accepts any config.
	Configure func(ctx context.Context, config json.RawMessage) []FieldError
	// Probe tells whether the plugin can serve now. Nil is always ready.
	Probe func(ctx context.Context) (ready bool, message string)
	// Close releases what the plugin holds (connections to its backend)
	// once Serve stopped serving, when the host stopped the plugin. Nil
	// holds nothing.
	Close func()

	// Logger receives the plugin's logs; nil logs JSON to stderr, which the
	// host forwards into its own log under the plugin's name.
	Logger hclog.Logger
}

// Serve serves p until the host stops it. It is the whole of a plugin's
// main. It exits the process with status 1 when p is not valid.
func Serve(p Plugin) {
	cfg, err := ServeConfig(p)
	if err != nil {
		fmt.Fprintf(os.Stderr, "podhost plugin %q: %v\n", p.Name, err)
		os.Exit(1)
	}
	defer serveProfiles(p.Name)()
	serve(p, cfg, plugin.Serve)
}

// serve runs run with cfg until it returns, then p.Close.
func serve(p Plugin, cfg *plugin.ServeConfig, run func(*plugin.ServeConfig)) {
	if p.Close != nil {
		defer p.Close()
	}
	run(cfg)
}

// ServeConfig is the go-plugin configuration Serve uses; tests and
// embedders may pass it to plugin.Serve themselves (with Test set).
func ServeConfig(p Plugin) (*plugin.ServeConfig, error) {
	register, err := p.register()
	if err != nil {
		return nil, err
	}
	logger := p.Logger
	if logger == nil {
		logger = hclog.New(&hclog.LoggerOptions{
			Name:       p.Name,
			Level:      hclog.Trace,
			Output:     os.Stderr,
			JSONFormat: true,
		})
	}
	return &plugin.ServeConfig{
		HandshakeConfig:  pluginapi.Handshake,
		VersionedPlugins: pluginapi.PluginSets(p.Kind, register),
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           logger,
	}, nil
}

// register returns the function that adds p's services to a gRPC server;
// in-process tests use it to serve p without go-plugin.
func (p Plugin) register() (func(*grpc.Server), error) {
	if p.Name == "" {
		return nil, errors.New("plugin name is empty")
	}
	if p.Volumes != nil {
		if p.Kind != pluginapi.KindVolume || p.Volume != nil || p.Runtime != nil {
			return nil, errors.New("a plugin that sets Volumes is of kind volume and sets neither Volume nor Runtime")
		}
		srv, caps, err := volumeServerFor(p)
		if err != nil {
			return nil, err
		}
		p.Volume, p.Capabilities = srv, caps
	}
	id := &identity{p: p}
	switch p.Kind {
	case pluginapi.KindRuntime:
		if p.Runtime == nil || p.Volume != nil {
			return nil, errors.New("a runtime plugin sets Runtime and not Volume")
		}
		return func(s *grpc.Server) {
			pluginv1.RegisterIdentityServer(s, id)
			runtimev1.RegisterRuntimeServer(s, p.Runtime)
		}, nil
	case pluginapi.KindVolume:
		if p.Volume == nil || p.Runtime != nil {
			return nil, errors.New("a volume plugin sets Volume and not Runtime")
		}
		return func(s *grpc.Server) {
			pluginv1.RegisterIdentityServer(s, id)
			volumev1.RegisterVolumeServer(s, p.Volume)
		}, nil
	default:
		return nil, fmt.Errorf("unknown plugin kind %q", p.Kind)
	}
}

// Register adds p's services (Identity and its kind's service) to s, for
// serving p in process.
func Register(s *grpc.Server, p Plugin) error {
	register, err := p.register()
	if err != nil {
		return err
	}
	register(s)
	return nil
}

// VolumeServer returns the Volume service the SDK serves for p.Volumes and
// the capabilities GetInfo lists with it. A plugin that must answer a call
// at the gRPC level embeds the service in its own, and serves that as
// Volume with these Capabilities (and Volumes nil).
func (p Plugin) VolumeServer() (volumev1.VolumeServer, []string, error) {
	if p.Volumes == nil {
		return nil, nil, errors.New("plugin sets no Volumes")
	}
	return volumeServerFor(p)
}
