// Command volume-csi is the podhost volume plugin that drives CSI node
// plugins. It serves podhost.volume.v1.Volume by calling the Identity and
// Node services of the driver a volume names, among the drivers its config
// lists by name and endpoint and those the host registers at run time
// (RegisterDriver: the kubelet's plugin registration, which the host
// serves; plugin.go). It caches each driver's NodeGetInfo and
// NodeGetCapabilities and fetches them again when the driver restarts; it
// stages only with STAGE_UNSTAGE_VOLUME and reads stats only with
// GET_VOLUME_STATS; every CSI call has a deadline (two minutes unless the
// driver's timeout says otherwise); node secrets come inline or from a
// directory the volume names. CSI codes map to the contract's error classes
// in errors.go, the one place. server.go only translates; node.go,
// driver.go, secrets.go and records.go do the work.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
