package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/extendwebsocketstokubelet"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/inplacepodresize"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/restartallcontainers"

	"github.com/podhost/podhost/host/kubenode"
	"github.com/podhost/podhost/host/nodeserver"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sources/kubesource"
)

// KubeServer is the node's daemon endpoint in Kubernetes mode: the HTTPS
// server the API server dials for `kubectl logs`, exec, attach and
// port-forward (host/nodeserver).
type KubeServer struct {
	Addr, CertFile, KeyFile, ClientCAFile string
}

// kubeAgent is the Node object's side of Kubernetes mode: registration,
// conditions and the Lease (host/kubenode), and the daemon endpoint.
type kubeAgent struct {
	agent  *kubenode.Agent
	server *nodeserver.Server
}

// buildKubeAgent listens on the daemon endpoint and builds the node agent
// that advertises it; a bad certificate or option fails the start.
func (n *Node) buildKubeAgent() (*kubeAgent, error) {
	k := n.cfg.Kubernetes
	a := &kubeAgent{}
	var port int32
	// In-place resize of pod-level resources and of running init
	// containers (resize.go of the runtime manager); the API server
	// refuses such a resize for a node that does not declare it.
	features := []string{inplacepodresize.IPPRPodLevelResourcesFeatureGate, inplacepodresize.IPPRInitContainersFeatureGate}
	// RestartAllContainers rules (restartall.go of the runtime manager);
	// the scheduler places a pod with one only on a node that declares it.
	features = append(features, restartallcontainers.Feature.Name())
	if k.Server != nil {
		srv, err := nodeserver.New(nodeserver.Options{
			Addr: k.Server.Addr, CertFile: k.Server.CertFile, KeyFile: k.Server.KeyFile, ClientCAFile: k.Server.ClientCAFile,
			Client: k.Client, NodeName: n.cfg.NodeName, Logs: podsAPI{n}.Logs, Streams: streamsAPI{n},
			Stats: n.stats, Pods: n.kubePods, Metrics: n.metricsGatherer(), Logger: n.log.Named("nodeserver"),
		})
		if err != nil {
			return nil, fmt.Errorf("kubernetes.server: %w", err)
		}
		a.server, port = srv, srv.Port()
		// The endpoint translates WebSocket streams itself, as the
		// kubelet does with this gate.
		features = append(features, extendwebsocketstokubelet.ExtendWebSocketsToKubeletFeatureGate)
	}
	addrs := make([]v1.NodeAddress, 0, len(n.cfg.NodeIPs)+1)
	for _, ip := range n.cfg.NodeIPs {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
	if host := nodeHostname(n.cfg.NodeName); host != "" {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeHostName, Address: host})
	}
	agent, err := kubenode.New(kubenode.Options{
		Client: k.Client, NodeName: n.cfg.NodeName, Addresses: addrs, DaemonPort: port, DeclaredFeatures: features,
		RootDir: n.cfg.RootDir, KubeletVersion: kubeletVersion(n.cfg.HostVersion),
		RuntimeVersion: n.runtimeVersion, RuntimeReady: n.runtimeReady, Labels: k.Labels,
		VolumesInUse: n.volumesInUse, VolumesReported: n.volumesReported,
		Pressure: n.eviction.Pressure,
		Logger:   n.log.Named("kubenode"), Registry: n.cfg.Registry,
	})
	if err != nil {
		if a.server != nil {
			a.server.Close()
		}
		return nil, err
	}
	a.agent = agent
	// The events of the API server's pods go to the API server too, where
	// kubectl describe pod and the cluster's tools read them, as the
	// kubelet's; those of the node's own (manifest) pods stay local.
	n.events.ForwardPods(func(pod *v1.Pod, eventType, reason, message string) {
		if podSource(pod) == kubesource.SourceValue {
			agent.PodEvent(pod, eventType, reason, message)
		}
	})
	return a, nil
}

// volumesInUse is node.status.volumesInUse: the volume manager's volumes in
// use, in the kubelet's unique names, once its state is rebuilt after the
// start (until then the Node's list stays, as the last run reported it).
func (n *Node) volumesInUse() ([]v1.UniqueVolumeName, bool) {
	if n.volumes == nil {
		return nil, true // a node built without volumes
	}
	select {
	case <-n.volumesReady:
	default:
		return nil, false
	}
	ids := n.volumes.VolumesInUse()
	out := make([]v1.UniqueVolumeName, len(ids))
	for i, id := range ids {
		out[i] = v1.UniqueVolumeName(id)
	}
	return out, true
}

// kubeletVersion is the version the node reports: the Kubernetes version
// it speaks, with podhost's as build metadata when it is a plain version.
func kubeletVersion(host string) string {
	v := strings.TrimPrefix(host, "v")
	for _, r := range v {
		if (r < '0' || r > '9') && r != '.' {
			return kubenode.KubeVersion
		}
	}
	if v == "" {
		return kubenode.KubeVersion
	}
	return kubenode.KubeVersion + "+podhost." + v
}

// run serves the daemon endpoint and runs the agent until ctx ends.
func (a *kubeAgent) run(ctx context.Context, log interface{ Error(string, ...any) }) {
	done := make(chan struct{})
	if a.server != nil {
		go func() {
			defer close(done)
			if err := a.server.Serve(ctx); err != nil {
				log.Error("the daemon endpoint stopped", "err", err)
			}
		}()
	} else {
		close(done)
	}
	if err := a.agent.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("the kubernetes node agent stopped", "err", err)
	}
	<-done
}

// runtimeVersion is status.nodeInfo.containerRuntimeVersion:
// "<runtime name>://<version>" from the runtime plugin.
func (n *Node) runtimeVersion(ctx context.Context) (string, error) {
	v, err := n.versionOfRuntime(ctx)
	if err != nil {
		return "", err
	}
	return v.GetRuntimeName() + "://" + v.GetRuntimeVersion(), nil
}

// runtimeType is the runtime's type as the container IDs carry it in the
// API server ("containerd" in containerd://ID): the runtime plugin's
// runtime name, as in the Node's containerRuntimeVersion.
func (n *Node) runtimeType(ctx context.Context) (string, error) {
	v, err := n.versionOfRuntime(ctx)
	if err != nil {
		return "", err
	}
	return v.GetRuntimeName(), nil
}

func (n *Node) versionOfRuntime(ctx context.Context) (*runtimev1.VersionResponse, error) {
	rt, err := n.cfg.Plugins.Runtime(n.cfg.RuntimePlugin)
	if err != nil {
		return nil, err
	}
	v, err := rt.Version(ctx, &runtimev1.VersionRequest{})
	if err != nil {
		return nil, fmt.Errorf("runtime plugin %s: version: %w", n.cfg.RuntimePlugin, err)
	}
	return v, nil
}

// runtimeReady is nil while the runtime plugin runs and reports its
// runtime ready. The network condition is left out: host-network pods run
// without a pod network.
func (n *Node) runtimeReady(ctx context.Context) error {
	rt, err := n.cfg.Plugins.Runtime(n.cfg.RuntimePlugin)
	if err != nil {
		return fmt.Errorf("runtime plugin %s is not running: %w", n.cfg.RuntimePlugin, err)
	}
	st, err := rt.Status(ctx, &runtimev1.StatusRequest{})
	if err != nil {
		return fmt.Errorf("runtime plugin %s: status: %w", n.cfg.RuntimePlugin, err)
	}
	for _, c := range st.GetConditions() {
		if c.GetType() == "RuntimeReady" && !c.GetStatus() {
			return fmt.Errorf("runtime %s: %s %s", n.cfg.RuntimePlugin, c.GetReason(), c.GetMessage())
		}
	}
	return nil
}
