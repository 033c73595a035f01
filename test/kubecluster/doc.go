// Package kubecluster runs a real Kubernetes control plane for tests and
// demos: etcd and kube-apiserver, and when Options ask for them
// kube-controller-manager and kube-scheduler, the binaries
// hack/kube-binaries.sh builds from the module proxy into a cache outside
// the checkout. Nothing is
// mocked: the API server authenticates with static tokens and client
// certificates, authorizes with the Node authorizer and RBAC, and runs the
// NodeRestriction admission plugin, as a real cluster does.
//
// Start writes a CA, the API server's serving and kubelet-client
// certificates, the service-account keys and a token file under one
// directory, starts etcd and the API server on free loopback ports, waits
// until /readyz answers, and creates what a controller manager would have
// made (the default service account and the kube-root-ca.crt config map).
// Every node named in Options gets a token for system:node:NAME, and a
// kubeconfig that verifies the API server against the CA. The controller
// manager and the scheduler (controlplane.go) run as the users the RBAC
// bootstrap policy names, with their own tokens, serving /healthz on a free
// loopback port with a certificate of the CA; the controller manager gives
// each controller its own service account and signs with the service
// account key, as the upstream e2e suite expects. NodeServingCert
// issues the certificate a node serves its daemon endpoint with, signed by
// the CA the API server trusts for kubelets. With Options.MetricsServer the
// API server runs its aggregation layer (a front-proxy CA of its own, the
// --requestheader-* flags, aggregator routing) and the real metrics-server
// (hack/metrics-server.sh) runs as a process of the machine, not a pod,
// registered as APIService v1beta1.metrics.k8s.io behind a Service and an
// EndpointSlice in kube-system (metricsserver.go), so that `kubectl top`
// works.
//
// Tests use StartForTest; a missing binary fails the test with the command
// that builds it, never a skip. Production code must not import this
// package; test/e2e and bench/ do.
package kubecluster
