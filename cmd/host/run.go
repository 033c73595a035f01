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
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/config"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/node"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/sdnotify"
	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
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
				Name:       "host",
				Level:      hclog.LevelFromString(cfg.LogLevel),
				Output:     cmd.ErrOrStderr(),
				JSONFormat: cfg.LogFormat == "json",
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
	// As the kubelet's root: volumes mounted with mountPropagation
	// HostToContainer or Bidirectional need their host side shared.
	if err := hostvolumes.MakeRShared(cfg.RootDir); err != nil {
		return fmt.Errorf("making the root dir a shared mount: %w", err)
	}
	// Stopping must outlive ctx, which is cancelled by the very signal that
	// asks for the stop.
	stopCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	}
	var stops []func(context.Context) // run in reverse order
	shutdown := func() {
		sctx, cancel := stopCtx()
		defer cancel()
		_, _ = sdnotify.Stopping(sctx)
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i](sctx)
		}
	}

	specs := pluginSpecs(cfg)
	mgr := supervisor.NewManager(supervisor.Options{
		Logger:        logger,
		SocketDir:     filepath.Join(cfg.RootDir, "plugins"),
		StartTimeout:  cfg.Supervision.StartTimeout,
		ProbeInterval: cfg.Supervision.ProbeInterval,
		Backoff: supervisor.BackoffPolicy{
			Initial:    cfg.Supervision.RestartBackoff.Initial,
			Max:        cfg.Supervision.RestartBackoff.Max,
			ResetAfter: cfg.Supervision.RestartBackoff.ResetAfter,
		},
		HostVersion: version,
	})
	stops = append(stops, func(sctx context.Context) {
		if err := mgr.Stop(sctx); err != nil {
			logger.Warn("stopping plugins", "err", err)
		}
	})
	logger.Info("starting plugins", "count", len(specs))
	if err := mgr.Start(ctx, specs); err != nil {
		shutdown()
		return fmt.Errorf("required plugins refused: %w", err)
	}
	logger.Info("plugins running", "plugins", pluginNames(specs))

	nodeName, err := nodeNameOf(cfg)
	if err != nil {
		shutdown()
		return err
	}
	kube, nodeIPs, err := kubeConfig(ctx, cfg)
	if err != nil {
		shutdown()
		return err
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	n, err := node.New(ctx, node.Config{
		RootDir:       cfg.RootDir,
		NodeName:      nodeName,
		ManifestDir:   cfg.ManifestDir,
		Plugins:       mgr,
		RuntimePlugin: runtimePlugin(specs),
		PluginSpecs:   specs,
		Registry:      registry,
		Logger:        logger,
		HostVersion:   version,
		LogRotation: runtimemanager.LogRotation{
			MaxBytes: cfg.ContainerLogMaxBytes(), MaxFiles: cfg.ContainerLogMaxFiles, Interval: cfg.ContainerLogMonitorInterval,
		},
		NodeIPs:    nodeIPs,
		Kubernetes: kube,

		AllowedUnsafeSysctls:  cfg.AllowedUnsafeSysctls,
		SeccompProfileRoot:    cfg.SeccompProfileRoot,
		PluginRegistrationDir: cfg.PluginRegistrationDir,
		ClusterDNS:            cfg.ClusterDNS,
		ClusterDomain:         cfg.ClusterDomain,

		EvictionHard:                     cfg.EvictionHard,
		EvictionPressureTransitionPeriod: cfg.EvictionPressureTransitionPeriod,
	})
	if err != nil {
		shutdown()
		return err
	}
	nodeCtx, stopNode := context.WithCancel(ctx)
	nodeDone := make(chan error, 1)
	go func() { nodeDone <- n.Run(nodeCtx) }()
	stops = append(stops, func(context.Context) {
		stopNode()
		if err := <-nodeDone; err != nil {
			logger.Warn("stopping the node", "err", err)
		}
	})

	views := apiViews(mgr, specs, n, registry, cfg.ShutdownGracePeriod)
	served := make(chan error, 2)
	serve := func(s *localapi.Server, what string) {
		go func() { served <- s.Serve() }()
		stops = append(stops, func(sctx context.Context) {
			if err := s.Shutdown(sctx); err != nil {
				logger.Warn("stopping local api", "listener", what, "err", err)
			}
		})
	}
	api, err := localapi.Listen(cfg.API.Socket, views)
	if err != nil {
		shutdown()
		return err
	}
	serve(api, cfg.API.Socket)
	if cfg.API.TCPAddress != "" {
		tcp, err := localapi.ListenTCP(cfg.API.TCPAddress, cfg.API.TokenFile, views)
		if err != nil {
			shutdown()
			return err
		}
		serve(tcp, cfg.API.TCPAddress)
	}
	logger.Info("host running", "api", cfg.API.Socket, "tcp", cfg.API.TCPAddress, "manifests", cfg.ManifestDir)
	go notifyReady(ctx, logger, views.Ready)
	go sdnotify.Heartbeat(ctx, systemdStatusInterval, systemdStatus(views), logger)

	select {
	case <-ctx.Done():
		logger.Info("stopping: plugins are stopped, containers keep running")
	case err := <-served:
		logger.Error("local api stopped", "err", err)
	}
	shutdown()
	return nil
}

// notifyReady tells systemd (Type=notify) once the host is ready: required
// plugins ready and every pod source synced.
func notifyReady(ctx context.Context, logger hclog.Logger, ready func() (bool, string)) {
	for {
		if ok, _ := ready(); ok {
			if sent, err := sdnotify.Ready(ctx); err != nil {
				logger.Warn("telling systemd the host is ready", "err", err)
			} else if sent {
				logger.Info("told systemd the host is ready")
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runtimePlugin names the runtime plugin; the config has exactly one.
func runtimePlugin(specs []supervisor.PluginSpec) string {
	for _, s := range specs {
		if s.Kind == pluginapi.KindRuntime {
			return s.Name
		}
	}
	return ""
}

func pluginNames(specs []supervisor.PluginSpec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return strings.Join(names, ",")
}

// apiViews exposes the supervisor's and the node's state to the local API.
func apiViews(mgr *supervisor.Manager, specs []supervisor.PluginSpec, n *node.Node, metrics prometheus.Gatherer, shutdownGrace time.Duration) localapi.Views {
	required := map[string]bool{}
	for _, s := range specs {
		required[s.Name] = s.Required
	}
	return localapi.Views{
		ConfigMaps: n.ConfigMaps,
		Secrets:    n.Secrets,
		Objects:    n.Objects(),
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
			if n.ShuttingDown() {
				return false, "node is shutting down"
			}
			if !n.SourcesReady() {
				return false, "pod sources not synced yet"
			}
			return true, ""
		},
		Pods:   n.Pods(),
		Events: n.Events(),
		Node:   n.NodeInfo,
		Shutdown: func(ctx context.Context) (localapi.ShutdownResult, error) {
			return n.Shutdown(ctx, shutdownGrace)
		},
		Metrics: metrics,
		Streams: n.Streams(),
		Stats:   n.StatsSummary,
	}
}

// pluginSpecs maps the config's plugin entries to the supervisor's specs.
func pluginSpecs(cfg *config.HostConfig) []supervisor.PluginSpec {
	var specs []supervisor.PluginSpec
	for _, p := range cfg.PluginSpecs() {
		specs = append(specs, supervisor.PluginSpec{
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
