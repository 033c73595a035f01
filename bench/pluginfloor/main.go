// Command pluginfloor measures the memory floor under the RSS goal at rest
// (host + plugin 48 MiB with 50 pods, BENCHMARKS.md):
// the smallest go-plugin pair podhost's shape allows, a host process that
// launches itself as a gRPC plugin with AutoMTLS (as the supervisor does)
// and calls go-plugin's own health service once a second, nothing else.
// After -for it prints the RSS of both processes, with its anonymous and
// file-backed parts (/proc/PID/status), as a markdown table:
//
//	go run ./bench/pluginfloor [-for 30s]
//
// Build it stripped, as the Makefile builds podhost, for the numbers
// BENCHMARKS.md compares:
//
//	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /tmp/pluginfloor ./bench/pluginfloor && /tmp/pluginfloor
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

var handshake = plugin.HandshakeConfig{ProtocolVersion: 1, MagicCookieKey: "PODHOST_PLUGINFLOOR", MagicCookieValue: "floor"}

// healthOnly serves nothing of its own: go-plugin registers its health
// service on every gRPC plugin, and the client calls that.
type healthOnly struct{ plugin.NetRPCUnsupportedPlugin }

func (healthOnly) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }

func (healthOnly) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return healthpb.NewHealthClient(c), nil
}

func main() {
	if os.Getenv(handshake.MagicCookieKey) == handshake.MagicCookieValue {
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: handshake, Plugins: plugin.PluginSet{"floor": healthOnly{}},
			GRPCServer: plugin.DefaultGRPCServer})
		return
	}
	window := flag.Duration("for", 30*time.Second, "how long both processes run, calling once a second, before their RSS is read")
	flag.Parse()
	if err := run(*window); err != nil {
		fmt.Fprintln(os.Stderr, "pluginfloor:", err)
		os.Exit(1)
	}
}

func run(window time.Duration) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	c := plugin.NewClient(&plugin.ClientConfig{HandshakeConfig: handshake, Plugins: plugin.PluginSet{"floor": healthOnly{}},
		Cmd: exec.Command(self), AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC}, AutoMTLS: true,
		Logger: hclog.NewNullLogger()})
	defer c.Kill()
	rpc, err := c.Client()
	if err != nil {
		return fmt.Errorf("starting the plugin: %w", err)
	}
	raw, err := rpc.Dispense("floor")
	if err != nil {
		return err
	}
	health := raw.(healthpb.HealthClient)
	ctx := context.Background()
	for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(time.Second) {
		if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "plugin"}); err != nil {
			return fmt.Errorf("calling the plugin: %w", err)
		}
	}
	fmt.Printf("go-plugin pair at rest after %s, %s:\n\n| process | VmRSS | RssAnon | RssFile |\n|---|---|---|---|\n", window, runtime.Version())
	for _, p := range []struct {
		name string
		pid  int
	}{{"host", os.Getpid()}, {"plugin", c.ReattachConfig().Pid}} {
		fields, err := memory(p.pid)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %s | %s | %s |\n", p.name, fields["VmRSS"], fields["RssAnon"], fields["RssFile"])
	}
	return nil
}

// memory reads the RSS fields of /proc/PID/status, in MiB.
func memory(pid int) (map[string]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		var key string
		var kb int
		if _, err := fmt.Sscanf(line, "%s %d kB", &key, &kb); err == nil {
			out[strings.TrimSuffix(key, ":")] = fmt.Sprintf("%.1f MiB", float64(kb)/1024)
		}
	}
	return out, nil
}
