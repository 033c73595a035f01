// Command volume-scratch is an example podhost volume plugin whose volumes
// are directories on the node: Stage creates the volume's directory under
// the configured root (default /var/lib/volume-scratch) and bind-mounts it
// on the staging path, Publish bind-mounts the staging path on the pod's
// target path (read-only when asked), Unpublish and Unstage undo that, and
// Unstage deletes the directory. GetMetrics reports the usage of the
// filesystem that holds the root. It needs root to mount, and shows the
// mount helpers of sdk/mount and the conformance kit sdk/volumetest.
//
// The files follow the plugin-author layout: main.go is one sdk.Serve call,
// server.go translates between the proto messages and scratch.go, and
// scratch.go holds the logic on plain Go types.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
