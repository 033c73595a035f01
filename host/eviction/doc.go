// Package eviction owns the node's local storage limits and node-pressure
// eviction as the kubelet's eviction manager enforces them. For limits: a
// pod whose local ephemeral storage goes over what its spec allows is
// evicted (killed with a grace period of one second, phase Failed, reason
// Evicted, the kubelet's message, a Warning Evicted event) and never
// restarted.
//
// Every Period (10 s, the kubelet's eviction monitoring interval) the
// [Manager] measures each active pod's use of the node's disk: the
// writable layer of each container (the runtime plugin's ListStats), each
// container's logs (its directory under the pod's log directory, see
// host/runtimemanager.PodLogDir) and each emptyDir volume that is not
// Memory-backed (its directory under the pod's volume directory, see
// host/volumemanager/hostvolumes.PodVolumeDir; a Memory emptyDir is tmpfs
// and counts against memory). Directories are measured as du measures
// them: allocated blocks, hard links once, not crossing into other
// filesystems.
//
// [Decide] is the decision alone, a plain function of a pod and its
// [Usage], in the kubelet's order: an emptyDir over its sizeLimit, then
// the pod over the sum of its containers' ephemeral-storage limits (all
// its local storage counted), then a container whose writable layer and
// logs are over its own limit (its logs only when the runtime's image
// filesystem, which holds the writable layers, is another filesystem than
// the root directory's). Critical pods (static pods, mirror pods,
// system-critical priority) are never evicted, as the kubelet's; the
// manifest source refuses such limits on static pods, so none is accepted
// and left unenforced.
//
// Node-pressure eviction follows when no pod was evicted for a limit in
// the same period: the Manager asks Config.Signals for the node's
// [Observations] (host/node takes them from host/nodestats' last reading:
// memory.available is MemTotal less the working set, nodefs the statfs of
// the root directory, imagefs that of the runtime's image filesystem when
// it names one), finds the hard thresholds met ([ThresholdsMet]: the kubelet's
// defaults, memory first), keeps the pressure conditions for the
// transition period after their signal recovered ([Conditions],
// [Manager.Pressure], which host/kubenode reports as MemoryPressure and
// DiskPressure), records the node's EvictionThresholdMet event and evicts
// at most one pod ([DecidePressure]: the pods ranked as the kubelet ranks
// them, over their request first, then by priority, then by use above the
// request; critical pods never) with the kubelet's message and the
// DisruptionTarget condition ([SetStatus]). As the kubelet, it then waits
// for the evicted pod's cleanup (Config.Cleaned, which host/node answers
// with the pod worker's finished state) and for a reading taken after it,
// at most [PodCleanupTimeout], before it evicts another pod for pressure:
// a reading from before the cleanup still counts the evicted pod's memory
// or disk. Soft thresholds, minimum reclaim and reclaiming images or dead
// containers before evicting are not done.
//
// The Manager does not kill: it hands each eviction to its Evict function,
// which host/node wires to the pod workers (an UpdateKill marked Evict
// whose status function sets the terminal status).
//
// Only host/node imports it.
package eviction
