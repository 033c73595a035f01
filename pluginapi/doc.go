// Package pluginapi declares, once, the contract that both sides of a podhost
// plugin connection import: the go-plugin handshake, the protocol versions
// the host can negotiate, the plugin kinds, the capability names and the
// go-plugin GRPCPlugin wrapper that carries the generated gRPC services.
//
// The host (host/supervisor) and the plugin SDK (package sdk) import it; plugin
// authors normally use the SDK instead. It holds no logic beyond the
// declarations, so a change here is a change of the wire contract.
package pluginapi
