// Package sdk is what a podhost plugin author imports: Serve runs a runtime
// or volume implementation as a go-plugin gRPC plugin with the handshake,
// the Identity service (GetInfo, Probe, Configure) and logging done. A
// plugin's main is one call:
//
//	func main() {
//		sdk.Serve(sdk.Plugin{Name: "volume-example", Kind: sdk.KindVolume, Volumes: newVolumes()})
//	}
//
// A volume plugin implements Volumes (Stage, Unstage, Publish, Unpublish on
// plain Go request structs) and, for the optional steps, VolumeMetrics,
// VolumeReconstructor, VolumeAttacher and VolumeBlockMapper. The SDK serves
// it as the Volume service of proto/volume/v1: it refuses a request with a
// required argument missing, a relative path, or a volume ID that is not a
// single clean path element (unless Plugin.OpaqueVolumeIDs) with
// INVALID_ARGUMENT naming the field; it maps the errors the plugin wraps
// (ErrNotFound, ErrNotStaged, ErrAlreadyExists, ErrInvalidArgument,
// ErrUncertain, a context error, a gRPC status) to the contract's codes, and
// anything else to ABORTED; it derives the capabilities GetInfo and
// GetCapabilities advertise from the interfaces implemented; and Midway is
// the point where the conformance kit interrupts Stage and Publish. A plugin
// may instead serve proto/volume/v1 itself (Plugin.Volume), and a runtime
// plugin always does (Plugin.Runtime).
//
// Kind, the Kind* and Cap* constants and ContractVersion are the contract's
// (package pluginapi), re-exported so that a plugin imports sdk, its
// proto/<kind>/v1 package and nothing else of podhost; so is
// ClassifyVolumeError, the volume contract's error rule. DecodeConfig decodes
// a plugin's JSON config strictly and reports every problem with its field
// path ("drivers[1].endpoint: unknown field"); Config keeps a config in
// effect and is a Plugin.Configure that swaps in only a valid one
// (ConfigValidator); FieldErrors, Duration and UnixSocketPath help with the
// plugin's own checks.
//
// sdk/cgroupdir removes the cgroups a runtime plugin made itself,
// retrying while the kernel finds them busy.
//
// sdk/mount has the idempotent mount steps of a volume plugin (bind once,
// format and mount, unmount and remove, metrics of a mount). The
// conformance kits sdk/runtimetest and sdk/volumetest check an
// implementation against the contract from `go test`. docs/plugin-authors.md
// is the guide; examples/volume-scratch and examples/runtime-memory are
// complete plugins that pass the kits.
//
// Plugins, examples and the kits import it (test/crisetup sdk/cgroupdir), and tests of the host that
// need a real plugin in the test binary; the host's own code never does.
// It imports pluginapi, the generated protos and its own internal packages
// only.
package sdk
