// Package nodeserver owns the node's daemon endpoint in Kubernetes mode:
// the HTTPS server the API server dials for `kubectl logs`, exec, attach,
// cp and port-forward. It serves the kubelet's
// GET /containerLogs/{namespace}/{pod}/{container} with its query
// (follow, tailLines, timestamps, previous, sinceSeconds, sinceTime,
// limitBytes), and /exec/{namespace}/{pod}[/{uid}]/{container},
// /attach/… and /portForward/{namespace}/{pod}[/{uid}]; and the node's
// numbers and pods (stats.go): /stats/summary (the kubelet's Summary API,
// with only_cpu_and_memory), /metrics/resource (what metrics-server
// reads), /pods (a v1.PodList) and /healthz, from what host/nodestats
// keeps: a request never asks the runtime; and /metrics, the node's own
// Prometheus registry.
//
// Streams are served as the kubelet serves them, by host/streamproxy
// (shared with the local API): the runtime answers with a URL on its own
// streaming server and the upgraded connection is proxied there, SPDY end
// to end or translated from WebSocket. The node declares
// ExtendWebSocketsToKubelet on its Node, so the API server passes
// WebSocket requests through as well.
//
// Every request is authenticated and authorized as the kubelet does with
// webhook auth: a client certificate signed by the configured client CA
// (the API server's kubelet-client identity) or a bearer token that a
// TokenReview approves; then a SubjectAccessReview for a subresource of
// this node, with the verb of the HTTP method (exec and port-forward are
// POSTs: create). The subresource is the kubelet's with its
// KubeletFineGrainedAuthz: nodes/stats for /stats/…, nodes/metrics for
// /metrics/…, nodes/pods or else nodes/proxy for /pods, nodes/healthz or
// else nodes/proxy for /healthz, nodes/proxy for everything else. Both answers are cached briefly
// (allowed longer than denied). Without an API client only client
// certificates are accepted, and they are not reviewed.
//
// host/node imports it; the logs come from a function the node passes in
// (the same reader as the local API's logs), the streaming URLs from the
// node's Streams (host/runtimemanager asks the runtime plugin).
package nodeserver
