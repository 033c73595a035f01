package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/podhost/podhost/pluginapi"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
)

// pluginArg as the first argument of the test binary makes it a test plugin;
// the second argument names the behaviour.
const pluginArg = "podhost-test-plugin"

// Test plugin behaviours.
const (
	behaveOK         = "ok"          // a healthy volume plugin
	behaveProto2     = "proto2"      // serves go-plugin protocol version 2 only
	behaveContractV0 = "contract-v0" // lists only contract version v0
	behaveRuntime    = "runtime"     // a runtime plugin (wrong kind for a volume spec)
	behaveCrash      = "crash"       // exits right after start, before the handshake
	behaveBlockProbe = "block-probe" // Probe blocks from the second call on
	behaveLateReady  = "late-ready"  // the first Probe answers not ready
	behaveRawGRPC    = "raw-grpc"    // plain gRPC on the unix socket given as next argument, no go-plugin (benchmark baseline)
)

// Log lines the test plugins write, which tests look for in the host log.
const (
	logConfigured   = "test plugin configured"
	logProbeBlocked = "test plugin probe blocking"
)

func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == pluginArg && os.Getenv(pluginapi.Handshake.MagicCookieKey) != "" {
		if os.Args[2] == behaveRawGRPC && len(os.Args) == 4 {
			serveRawGRPC(os.Args[3])
		} else {
			serveTestPlugin(os.Args[2])
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// testPluginConfig is the config the test plugins accept.
type testPluginConfig struct {
	Root string `json:"root"`
}

// testPlugin is the sdk.Plugin of a behaviour.
func testPlugin(behaviour string, logger hclog.Logger) sdk.Plugin {
	var probes atomic.Int64
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	p := sdk.Plugin{
		Logger:       logger,
		Name:         "test-" + behaviour,
		Version:      "1.2.3",
		Kind:         pluginapi.KindVolume,
		Capabilities: []string{pluginapi.CapVolumeMetrics},
		Volume:       volumev1.UnimplementedVolumeServer{},
	}
	p.Configure = func(_ context.Context, raw json.RawMessage) []sdk.FieldError {
		var cfg testPluginConfig
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return []sdk.FieldError{{Field: "config", Message: err.Error()}}
		}
		if cfg.Root != "" && !filepath.IsAbs(cfg.Root) {
			return []sdk.FieldError{{Field: "storage.root", Message: "must be an absolute path"}}
		}
		logger.Info(logConfigured, "root", cfg.Root)
		return nil
	}
	switch behaviour {
	case behaveContractV0:
		p.ContractVersions = []string{"v0"}
	case behaveRuntime:
		p.Kind = pluginapi.KindRuntime
		p.Volume = nil
		p.Runtime = runtimev1.UnimplementedRuntimeServer{}
	case behaveBlockProbe:
		p.Probe = func(ctx context.Context) (bool, string) {
			if probes.Add(1) == 1 {
				return true, ""
			}
			logger.Info(logProbeBlocked)
			<-ctx.Done()
			return false, "cancelled"
		}
	case behaveLateReady:
		p.Probe = func(context.Context) (bool, string) {
			if probes.Add(1) == 1 {
				return false, "backend warming up"
			}
			return true, ""
		}
	}
	return p
}

// serveTestPlugin is the whole life of a test plugin process.
func serveTestPlugin(behaviour string) {
	if behaviour == behaveCrash {
		fmt.Fprintln(os.Stderr, "test plugin crashes on purpose")
		os.Exit(3)
	}
	// Log as the SDK does by default: JSON to stderr, which the host
	// forwards into its own log.
	logger := hclog.New(&hclog.LoggerOptions{Name: "test-" + behaviour, Level: hclog.Trace, Output: os.Stderr, JSONFormat: true})
	cfg, err := sdk.ServeConfig(testPlugin(behaviour, logger))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if behaviour == behaveProto2 {
		cfg.VersionedPlugins = map[int]plugin.PluginSet{2: cfg.VersionedPlugins[pluginapi.ProtocolVersion]}
	}
	plugin.Serve(cfg)
}

// serveRawGRPC serves the ok plugin's services with plain gRPC on a unix
// socket, without go-plugin, until it is killed.
func serveRawGRPC(socket string) {
	srv := grpc.NewServer()
	if err := sdk.Register(srv, testPlugin(behaveOK, nil)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = srv.Serve(ln)
}
