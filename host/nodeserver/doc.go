// Package nodeserver owns the node's daemon endpoint in Kubernetes mode:
// the HTTPS server the API server dials for `kubectl logs`, serving the
// kubelet's GET /containerLogs/{namespace}/{pod}/{container} with its query
// (follow, tailLines, timestamps, previous, sinceSeconds, sinceTime,
// limitBytes).
//
// Every request is authenticated and authorized as the kubelet does with
// webhook auth: a client certificate signed by the configured client CA
// (the API server's kubelet-client identity) or a bearer token that a
// TokenReview approves; then a SubjectAccessReview for the nodes/proxy
// subresource of this node, with the verb of the HTTP method. Both answers
// are cached briefly (allowed longer than denied). Without an API client
// only client certificates are accepted, and they are not reviewed.
//
// host/node imports it; the logs themselves come from a function the node
// passes in (the same reader as the local API's logs).
package nodeserver
