// Command runtime-containerd is the podhost runtime plugin for containerd.
// It will serve podhost.runtime.v1.Runtime by talking to containerd at the
// configured endpoint; for now it is a skeleton that answers GetInfo,
// validates its config and probes that containerd's socket exists, while
// every Runtime call is UNIMPLEMENTED.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
