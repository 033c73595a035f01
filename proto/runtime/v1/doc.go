// Package runtimev1 is the Go code generated from runtime.proto
// (podhost.runtime.v1): the container-level Runtime service a runtime
// plugin serves (sandboxes, containers, images, status, the Events
// stream, and the URLs of the runtime's own streaming server for exec,
// attach and port-forward). The .proto file and its comments are the
// contract; `make proto` regenerates the code, which is committed, and
// `make check-proto` fails when it is stale. This doc.go is the only hand-written file here.
//
// Both sides import it: on the host, host/runtimemanager (and the wiring
// in host/node and host/supervisor); on the plugin side, the SDK, the
// conformance kit sdk/runtimetest and every runtime plugin.
package runtimev1
