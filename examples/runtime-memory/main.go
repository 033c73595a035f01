// Command runtime-memory is an example podhost runtime plugin that runs
// nothing: it keeps sandboxes, containers and images in memory, moves
// containers CREATED → RUNNING → EXITED on Start and Stop, and streams those
// changes on Events (capability "runtime.events"). It is the reference for
// the conformance kit sdk/runtimetest and a stand-in runtime for tests of the
// host.
//
// The files follow the plugin-author layout: main.go is one sdk.Serve call,
// server.go translates between the proto messages and the logic, and
// memory.go, images.go and events.go hold the logic on plain Go types.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
