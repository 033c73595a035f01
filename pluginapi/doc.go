// Package pluginapi declares, once, the contract that both sides of a podhost
// plugin connection import: the go-plugin handshake, the protocol versions
// the host can negotiate, the plugin kinds, the capability names and the
// go-plugin GRPCPlugin wrapper that carries the generated gRPC services.
//
// The host (host/supervisor, host/config and host/node for the kinds, and
// cmd/host) and the plugin SDK (package sdk and its conformance kits)
// import it. Plugins and examples do not: sdk re-exports the kinds, the
// capability names and the contract version, so a plugin imports only sdk
// and its proto package. It holds no logic beyond the declarations, so a
// change here is a change of the wire contract. Its package volumeerr is
// the volume contract's error rule (Classify), for the host and, through
// sdk, for plugins.
package pluginapi
