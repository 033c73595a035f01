// Package streamproxy owns serving exec, attach and port-forward as the
// kubelet does, for both endpoints that offer them: host/nodeserver (the
// daemon endpoint the API server dials in Kubernetes mode) and
// host/localapi (the local API the `podhost` CLI talks to). Each endpoint
// keeps its own routes and access control and hands the request here with
// the pod (and container) it names.
//
// The runtime answers an exec, attach or port-forward with a URL on its
// own streaming server (containerd's CRI streaming server), found through
// [Streams]; the upgraded connection is proxied there with apimachinery's
// UpgradeAwareHandler, SPDY end to end. A WebSocket request is translated
// with the API server's own translators (k8s.io/apiserver's
// StreamTranslatorHandler for exec and attach, the v5 protocol with the
// exit code in its status channel; TunnelingHandler for port-forward's
// SPDY-over-WebSocket), because containerd's streaming server speaks SPDY
// and the older WebSocket protocols only. Query parsing is the CRI
// streaming packages' (k8s.io/cri-streaming).
//
// It imports nothing of the module: the endpoints answer what Streams
// could not find through [Proxy.Refuse], with their own error mapping.
package streamproxy
