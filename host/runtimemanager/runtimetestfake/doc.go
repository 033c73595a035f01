// Package runtimetestfake is an in-memory runtime plugin for the tests of
// the runtime manager: a runtimev1.RuntimeServer that keeps sandboxes,
// containers and images in maps, records every call, and lets a test fail
// or delay calls (Before, After) and change the world behind the host's
// back (ExitContainer, KillSandbox). It passes the conformance kit
// sdk/runtimetest (see its test), so tests of the host run against an
// honest runtime. Dial serves it over real gRPC inside the test process;
// Direct calls it without gRPC, for tests under testing/synctest.
//
// Only tests import it.
package runtimetestfake
