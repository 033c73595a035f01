// Command volume-iscsi is the podhost volume plugin for iSCSI LUNs. It
// will serve podhost.volume.v1.Volume by logging in to the target a volume
// names with iscsiadm and mounting the device that appears; for now it is a
// skeleton that answers GetInfo, validates its config and reports ready,
// while every Volume call is UNIMPLEMENTED.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
