package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host"
	"github.com/podhost/podhost/host/config"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/node"
	"github.com/podhost/podhost/host/pluginapi"
)

// stopTimeout bounds a graceful stop: plugins are stopped, containers are
// left running.
const stopTimeout = 15 * time.Second

func newRunCommand() *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "run --config FILE",
		Short: "Run the host until SIGTERM or SIGINT",
		Long: "Run the host: launch and supervise the configured plugins and serve the local API.\n" +
			"SIGTERM or SIGINT stops the host gracefully: plugins are stopped, containers keep running.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(path)
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return exitError{code: 1}
			}
			logger := hclog.New(&hclog.LoggerOptions{
				Name:   "host",
				Level:  hclog.LevelFromString(cfg.LogLevel),
				Output: cmd.ErrOrStderr(),
			})
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if err := runHost(ctx, cfg, logger); err != nil {
				logger.Error("host stopped", "err", err)
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "host config file (YAML)")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// runHost runs until ctx is done. It returns an error when a required plugin
// is refused at start or the local API cannot be served.
func runHost(ctx context.Context, cfg *config.HostConfig, logger hclog.Logger) error {
	if err := os.MkdirAll(cfg.RootDir, 0o700); err != nil {
		return fmt.Errorf("creating root dir: %w", err)
	}
	specs := pluginSpecs(cfg)
	mgr := host.NewManager(host.Options{
		Logger:        logger,
		SocketDir:     filepath.Join(cfg.RootDir, "plugins"),
		StartTimeout:  cfg.Supervision.StartTimeout,
		ProbeInterval: cfg.Supervision.ProbeInterval,
		Backoff: host.BackoffPolicy{
			Initial:    cfg.Supervision.RestartBackoff.Initial,
			Max:        cfg.Supervision.RestartBackoff.Max,
			ResetAfter: cfg.Supervision.RestartBackoff.ResetAfter,
		},
		HostVersion: version,
	})

	api, err := localapi.Listen(cfg.API.Socket, apiViews(mgr, specs))
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- api.Serve() }()

	// Stopping must outlive ctx, which is cancelled by the very signal that
	// asks for the stop.
	stopCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	}
	shutdown := func() {
		sctx, cancel := stopCtx()
		defer cancel()
		if err := mgr.Stop(sctx); err != nil {
			logger.Warn("stopping plugins", "err", err)
		}
		if err := api.Shutdown(sctx); err != nil {
			logger.Warn("stopping local api", "err", err)
		}
		<-served
	}

	logger.Info("starting plugins", "count", len(specs), "api", cfg.API.Socket)
	if err := mgr.Start(ctx, specs); err != nil {
		shutdown()
		return fmt.Errorf("required plugins refused: %w", err)
	}
	logger.Info("host running", "plugins", pluginNames(specs))

	nodeName, err := os.Hostname()
	if err != nil {
		shutdown()
		return fmt.Errorf("reading the node name: %w", err)
	}
	n, err := node.New(node.Config{
		RootDir:       cfg.RootDir,
		NodeName:      nodeName,
		ManifestDir:   cfg.ManifestDir,
		Plugins:       mgr,
		RuntimePlugin: runtimePlugin(specs),
		Logger:        logger,
	})
	if err != nil {
		shutdown()
		return err
	}
	nodeCtx, stopNode := context.WithCancel(ctx)
	nodeDone := make(chan error, 1)
	go func() { nodeDone <- n.Run(nodeCtx) }()
	stopAll := shutdown
	shutdown = func() {
		stopNode()
		if err := <-nodeDone; err != nil {
			logger.Warn("stopping the node", "err", err)
		}
		stopAll()
	}

	select {
	case <-ctx.Done():
		logger.Info("stopping: plugins are stopped, containers keep running")
	case err := <-served:
		served <- err
		logger.Error("local api stopped", "err", err)
	}
	shutdown()
	return nil
}

// pluginSpecs maps the config's plugin entries to the supervisor's specs.
func pluginSpecs(cfg *config.HostConfig) []host.PluginSpec {
	var specs []host.PluginSpec
	for _, p := range cfg.PluginSpecs() {
		specs = append(specs, host.PluginSpec{
			Name:     p.Name,
			Kind:     p.Kind,
			Path:     p.Path,
			Args:     p.Args,
			SHA256:   p.SHA256,
			Config:   p.Config,
			Required: p.Required,
		})
	}
	return specs
}

// runtimePlugin names the runtime plugin; the config has exactly one.
func runtimePlugin(specs []host.PluginSpec) string {
	for _, s := range specs {
		if s.Kind == pluginapi.KindRuntime {
			return s.Name
		}
	}
	return ""
}

func pluginNames(specs []host.PluginSpec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return strings.Join(names, ",")
}

// apiViews exposes the supervisor's state to the local API.
func apiViews(mgr *host.Manager, specs []host.PluginSpec) localapi.Views {
	required := map[string]bool{}
	for _, s := range specs {
		required[s.Name] = s.Required
	}
	return localapi.Views{
		Plugins: func() []localapi.PluginInfo {
			var out []localapi.PluginInfo
			for _, st := range mgr.List() {
				out = append(out, localapi.PluginInfo{
					Name:         st.Name,
					Kind:         string(st.Kind),
					Version:      st.Version,
					State:        string(st.State),
					Ready:        st.Ready,
					Required:     required[st.Name],
					Restarts:     st.Restarts,
					LastError:    st.LastError,
					Capabilities: st.Capabilities,
					PID:          st.PID,
					Since:        st.Since,
				})
			}
			return out
		},
		Ready: func() (bool, string) {
			var notReady []string
			for _, st := range mgr.List() {
				if required[st.Name] && !st.Ready {
					notReady = append(notReady, st.Name+" ("+string(st.State)+")")
				}
			}
			if len(notReady) > 0 {
				return false, "required plugins not ready: " + strings.Join(notReady, ", ")
			}
			return true, ""
		},
	}
}
