// Command volume-scratch is an example podhost volume plugin whose volumes
// are plain directories: Stage creates a directory under the staging path
// and marks it with the volume's ID, Publish creates the target path as a
// directory for the pod, and GetMetrics reports the usage of the filesystem
// that holds it. It needs no mounts and no root, which makes it the plugin
// the SDK documentation walks through and a reference for the conformance
// kit sdk/volumetest.
//
// The files follow the plugin-author layout: main.go is one sdk.Serve call,
// server.go translates between the proto messages and scratch.go, and
// scratch.go holds the logic on plain Go types.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
