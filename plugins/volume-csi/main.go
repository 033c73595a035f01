// Command volume-csi is the podhost volume plugin that drives CSI node
// plugins. It will serve podhost.volume.v1.Volume by calling the CSI Node
// service of the driver a volume names, among the drivers configured; for
// now it is a skeleton that answers GetInfo, validates its config and
// reports ready, while every Volume call is UNIMPLEMENTED.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
