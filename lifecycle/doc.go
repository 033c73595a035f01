// Package lifecycle owns the life of a pod on the node: the pod worker
// (create, sync, terminate, finish), the status manager (versioned cache,
// batched writes to sinks), housekeeping (config versus runtime), the PLEG
// and runtime cache, and the lifecycle metrics.
//
// The core is deterministic. PodWorkers and StatusManager are state
// machines: requests in, work out, time from an injected Clock, jitter from
// an injected Jitter. They start no goroutines. PodWorkers does no I/O;
// StatusManager does only through its StatusSink: SyncBatch reads and
// writes the batch's pods there (the sink is the local store or the API
// server). Small drivers perform the work: Workers (one goroutine per
// pod), PLEG.Run, SyncLoop and StatusManager.Run (which calls SyncBatch).
//
// Who may import it: cmd/host and host/. It imports only the standard
// library, k8s.io/api, k8s.io/apimachinery, prometheus and component-base;
// never gRPC, go-plugin, proto/ or os/exec (deps_test.go enforces it). The
// runtime, volumes and status sinks are the interfaces in contracts.go,
// implemented by host/ on top of the plugins.
//
// A pod UID moves through these states and never backwards:
//
//	(unknown) --UpdatePod--> WAITING --allowed--> SYNC --kill/delete/terminal--> TERMINATING
//	              |             |                   |                               |   ^ err: retry
//	              |             |                   +--SyncPod says terminal--------+   |
//	              |             +--kill before start--> FINISHED (no sync* call)    |ok
//	              |                                                                 v
//	              |                                 FINISHED <--ok-- TERMINATED <---+
//	              |                                    |               ^ err: retry
//	              |                                    +--SyncKnownPods (orphan or restart)--> (forgotten)
//	              +--runtime-only kill--> TERMINATING(runtime) --ok--> (forgotten at once)
//
// SYNC calls PodSyncer.SyncPod, TERMINATING calls SyncTerminatingPod (or
// SyncTerminatingRuntimePod), TERMINATED calls SyncTerminatedPod. The
// Syncer's SyncPod says terminal also for a pod past its
// activeDeadlineSeconds (deadline.go), which the SyncLoop syncs as soon as
// it is due (SyncLoop.ShouldSync).
//
// The guarantees the package keeps are written in docs/lifecycle.md.
//
// Housekeeping (Housekeeper.Cleanup) runs the steps of docs/lifecycle.md,
// section 6, in their order: SyncKnownPods, runtime listing, orphaned
// statuses, orphaned pod directories (PodDirs), orphaned mirror pods
// (MirrorPodDeleter, skipping those whose static pod is still terminating),
// config gauges, re-creation of desired pods unknown to the worker, kills of
// deleted terminal pods and of runtime pods unknown to the worker, and
// kubelet_working_pods. The kubelet's user-namespace release, pod cgroup
// removal and back-off GC are left out: podhost has no user namespaces or
// QoS cgroups yet, and container back-off is owned by the runtime plugin.
// Probe workers are stopped by the Syncer (SyncTerminatingPod) rather than
// by housekeeping.
//
// Probes: ProbeManager runs one worker per liveness, readiness and startup
// probe of each app container and sidecar (an init container with
// restartPolicy Always; probeState is its deterministic state machine:
// initial delay, period, thresholds, startup gating, no probe while
// terminating or not running). Results go to ProbeResults, which the
// StatusManager reads (its Probes field) for each container's started and
// ready and the Initialized, ContainersReady and Ready conditions, and the
// runtime reads for whether a sidecar started; a startup success asks the
// SyncLoop (ProbeSyncs) to sync the pod, so that the container after a
// sidecar starts at once; a liveness or startup failure past its
// threshold kills the container through a ContainerKiller. The probes
// themselves are run by a ProbeRunner of the host.
//
// Duties of the drivers:
//
//  1. Call PodWorkers.Begin for every doorbell signal of a UID, perform the
//     returned Work, then call Complete with its result; exit when the
//     doorbell is closed or Begin/Complete says so.
//  2. Cancel the context of a Work as soon as UpdatePod names it in
//     UpdateEffects.Cancel or SyncKnownPods in its cancel list; never start
//     a container on a cancelled context. Termination, by any path,
//     cancels the in-flight SyncPod.
//  3. Hand the syncer a runtime status newer than Work.StatusNewerThan.
//  4. Call SyncKnownPods only from housekeeping, and run housekeeping only
//     once every config source has reported.
//  5. Call StatusManager.SyncBatch(false) on each doorbell and
//     SyncBatch(true) every StatusSyncPeriod, from a single goroutine.
package lifecycle
