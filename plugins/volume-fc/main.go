// Command volume-fc is the podhost volume plugin for Fibre Channel LUNs.
// It will serve podhost.volume.v1.Volume by scanning the FC hosts under
// sysfs for the LUN a volume names and mounting the device it finds; for
// now it is a skeleton that answers GetInfo, validates its config and
// reports ready, while every Volume call is UNIMPLEMENTED.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
