// Package lifecycletest holds hand-written fakes of the lifecycle
// interfaces (FakeClock, FakeRuntime, FakeSyncer, RecordingSink,
// FakeRecorder) and the transcript harness that drives the deterministic
// pod worker core from lifecycle/testdata/*.txt.
//
// Only tests may import it: tests of lifecycle, and tests of the host that
// need a runtime or a sink without plugins.
package lifecycletest
