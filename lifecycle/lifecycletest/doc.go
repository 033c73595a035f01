// Package lifecycletest holds hand-written fakes of the lifecycle
// interfaces (FakeClock, FakeRuntime, FakeSyncer, RecordingSink,
// FakeRecorder) and the transcript harness that drives the deterministic
// pod worker core from lifecycle/testdata/*.txt.
//
// FakeRuntime implements lifecycle.Runtime directly: pods and containers
// in memory, no wire and no latency, so the core's tests and benchmarks
// stay deterministic. The host's implementation of that interface
// (host/runtimemanager) is tested against runtimetestfake, a runtime on the
// wire contract, instead; examples/runtime-memory is a plugin for plugin
// authors to read, not a fake.
//
// Only tests may import it: tests of lifecycle, and tests of the host that
// need a fake clock, runtime or sink (host/runtimemanager uses FakeClock).
// Like lifecycle, it imports nothing of host/, sdk/, plugins/ or proto/.
package lifecycletest
