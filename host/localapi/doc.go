// Package localapi owns the host's local HTTP API and the client the `podhost`
// CLI uses. It serves on a unix socket under the root directory (mode 0600,
// so only root and the socket's owner reach it) and, optionally, on a TCP
// address where every request must carry the bearer token read from a file
// that only its owner may read ([ListenTCP]). It answers from [Views] the
// host hands it (functions and the [Pods] and [Events] interfaces), so it
// imports nothing of the host.
//
// Endpoints (errors are JSON [ErrorBody] values; bodies are limited to
// [MaxBodySize]; unknown query parameters are refused with 400):
//
//	GET    /v1/plugins                      the supervised plugins
//	GET    /v1/pods                         pod summaries (namespace/name, uid, phase, ready, restarts, created, reason, error)
//	GET    /v1/pods?watch=true              JSON lines: ADDED for every pod, then ADDED/MODIFIED/DELETED
//	POST   /v1/pods                         apply (create or update) one pod, JSON or YAML; 201 created, 200 updated/unchanged, 400 if it does not parse, 422 with every field
//	GET    /v1/pods/{ns}/{name}             one pod with its status
//	DELETE /v1/pods/{ns}/{name}?gracePeriod=N&force=true
//	GET    /v1/pods/{ns}/{name}/logs?container=C&follow=true&tailLines=N   text
//	       &previous=true&timestamps=true&sinceSeconds=N (or &sinceTime=RFC3339)
//	GET|POST /v1/pods/{ns}/{name}/exec?container=C&command=A&command=B&input=1&output=1&error=1&tty=1
//	GET|POST /v1/pods/{ns}/{name}/attach?container=C&input=1&output=1&error=1&tty=1
//	GET|POST /v1/pods/{ns}/{name}/portforward[?port=N]  upgraded streams (SPDY, or WebSocket), host/streamproxy's
//	GET    /v1/stats/summary                the node's last stats reading (the kubelet's Summary API)
//	GET    /v1/events?for=NS/NAME&kind=K&watch=true                        JSON array, or JSON lines with watch
//	GET    /v1/configmaps, /v1/secrets      the sources' ConfigMaps and Secrets: keys and origin, never values
//	POST   /v1/configmaps, /v1/secrets      apply one (JSON or YAML); 201 created, 200 updated/unchanged, 422 with every field
//	DELETE /v1/configmaps/{ns}/{name}, /v1/secrets/{ns}/{name}
//	GET    /v1/node                         hostname, version, readiness, plugin and pod counts
//	GET    /metrics                         Prometheus text
//	GET    /healthz                         200 while the host process serves
//	GET    /readyz                          200 when the host is ready, else 503
//	GET    /debug/pprof/...                 Go runtime profiles (net/http/pprof), behind the same access control
//
// The streams take the kubelet's query (the container defaults to the one
// the kubectl.kubernetes.io/default-container annotation names, else the
// first); the client's Exec, Attach and PortForward use client-go's
// executors and port forwarder: over TCP WebSocket with SPDY as kubectl's
// fallback, over the unix socket SPDY alone, since client-go's WebSocket
// transport takes no dialer.
//
// host/node serves the API; cmd/host, bench/podstart and test/e2e use the
// client; those are its importers. Subpackage localapitest holds fakes of
// the views for tests.
package localapi
