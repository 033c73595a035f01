// Command runtime-memory is an example podhost runtime plugin that runs
// nothing: it keeps sandboxes, containers and images in memory, moves
// containers CREATED → RUNNING → EXITED on Start and Stop, and streams those
// changes on Events (capability "runtime.events"). It is a reference for
// the conformance kit sdk/runtimetest and the runtime docs/plugin-authors.md
// points to. It imports only sdk and proto/runtime/v1, as any plugin would.
//
// It is an example, not a test fake: tests of the lifecycle core use
// lifecycletest.FakeRuntime and tests of the host's runtime manager use
// host/runtimemanager/runtimetestfake, which have hooks for injecting
// faults that a plugin to read should not carry.
//
// The files follow the plugin-author layout: main.go is one sdk.Serve call,
// server.go translates between the proto messages and the logic, and
// memory.go, images.go and events.go hold the logic on plain Go types.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
