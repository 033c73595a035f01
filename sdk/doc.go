// Package sdk is what a podhost plugin author imports: Serve runs a runtime
// or volume implementation as a go-plugin gRPC plugin with the handshake,
// the Identity service (GetInfo, Probe, Configure) and logging done. A
// plugin's main is one call:
//
//	func main() {
//		sdk.Serve(sdk.Plugin{Name: "volume-example", Kind: pluginapi.KindVolume, Volume: newServer()})
//	}
//
// The conformance kits sdk/runtimetest and sdk/volumetest check an
// implementation against the contract from `go test`.
package sdk
