// Package node owns the running agent: it composes the pod sources (static
// manifests, the local API, in Kubernetes mode the API server: kube.go),
// the lifecycle core (pod workers, PLEG, status
// manager, housekeeping, the probe manager with host/prober running the
// probes and hooks), the runtime manager over the runtime plugin, the
// volume manager over host/volumeplugins (the adapter of every volume
// kind), the local state store and the event ring, and exposes them to
// the local API; in Kubernetes mode also to the daemon endpoint
// (host/nodeserver, kubeagent.go). The node's stats are gathered by
// host/nodestats in both modes (nodestats.go), for the daemon endpoint and
// the local API's `podhost top`; both endpoints find the runtime's
// streaming URLs for exec, attach and port-forward through streams.go. The pods' local storage limits are
// enforced by host/eviction, whose evictions go to the pod workers as
// eviction kills (eviction.go). The plugin registration directory
// (host/pluginregistration) hands its CSI drivers to the volume plugins
// and, in Kubernetes mode, to the CSINode (host/csinode;
// csiregistration.go).
//
// Only cmd/host imports it. It holds wiring and the glue between packages
// (turning changes of the desired pod set into pod worker updates); the
// behaviour lives in the packages it wires.
package node
