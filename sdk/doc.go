// Package sdk is what a podhost plugin author imports: Serve runs a runtime
// or volume implementation as a go-plugin gRPC plugin with the handshake,
// the Identity service (GetInfo, Probe, Configure) and logging done. A
// plugin's main is one call:
//
//	func main() {
//		sdk.Serve(sdk.Plugin{Name: "volume-example", Kind: sdk.KindVolume, Volume: newServer()})
//	}
//
// Kind, the Kind* and Cap* constants and ContractVersion are the contract's
// (package pluginapi), re-exported so that a plugin imports sdk, its
// proto/<kind>/v1 package and nothing else of podhost; so is
// ClassifyVolumeError, the volume contract's error rule. DecodeConfig decodes
// a plugin's JSON config strictly and reports every problem with its field
// path ("drivers[1].endpoint: unknown field"); FieldErrors, Duration and
// UnixSocketPath help with the plugin's own checks.
//
// sdk/mount has the idempotent mount steps of a volume plugin (bind once,
// format and mount, unmount and remove, metrics of a mount). The
// conformance kits sdk/runtimetest and sdk/volumetest check an
// implementation against the contract from `go test`. docs/plugin-authors.md
// is the guide; examples/volume-scratch and examples/runtime-memory are
// complete plugins that pass the kits.
//
// Plugins, examples and the kits import it, and tests of the host that
// need a real plugin in the test binary; the host's own code never does.
// It imports pluginapi and the generated protos only.
package sdk
