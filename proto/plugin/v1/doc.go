// Package pluginv1 is the Go code generated from identity.proto
// (podhost.plugin.v1): the Identity service every plugin serves next to
// its kind's service (GetInfo, Configure, Probe). The .proto file and its
// comments are the contract; `make proto` regenerates the code, which is
// committed, and `make check-proto` fails when it is stale. This doc.go is
// the only hand-written file here.
//
// Both sides import it: the host's supervisor calls it at every launch,
// and pluginapi, the SDK and its conformance kits serve and check it. A
// plugin author does not import it: sdk.Serve answers Identity from the
// sdk.Plugin description.
package pluginv1
