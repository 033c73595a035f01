// Package runtimetestfake is an in-memory runtime plugin for the tests of
// the runtime manager: a runtimev1.RuntimeServer that keeps sandboxes,
// containers and images in maps, records every call, and lets a test fail
// or delay calls (Before, After) and change the world behind the host's
// back (ExitContainer, KillSandbox). It passes the conformance kit
// sdk/runtimetest (see its test), so tests of the host run against an
// honest runtime. Dial serves it over real gRPC inside the test process;
// Direct calls it without gRPC, for tests under testing/synctest.
//
// It is one of three in-memory runtimes, each for its own purpose:
//
//   - this one speaks the wire contract (proto/runtime/v1) with hooks for
//     fault injection, for the host code that turns lifecycle.Runtime into
//     plugin calls (host/runtimemanager);
//   - lifecycletest.FakeRuntime implements lifecycle.Runtime itself, pods
//     and containers without a wire, for the deterministic core's tests;
//   - examples/runtime-memory is a complete plugin for plugin authors to
//     read, built with the SDK, with no test hooks.
//
// It imports only the generated protos and gRPC: nothing from sdk/ or from
// the plugins. Only tests import it.
package runtimetestfake
