// Package volumemanager owns the host's volumes: the desired state of
// world (which pod needs which volume), the actual state of world (what is
// staged and published, including what may be), the reconciler that turns
// the difference into plugin operations, and reconstruction after a host
// restart. The behaviour is the kubelet's volume manager's, restated in
// the rules below (error classes, operation transitions, placeholders).
//
// The core is deterministic, in the style of lifecycle/: Reconciler.Step
// takes the time and returns the operations to start; Reconciler.Complete
// takes an operation's error and updates the actual state by the error's
// class (final, uncertain, transient), which a Classifier decides. It
// starts no goroutines and does no I/O. Manager is the small driver: it
// runs the operations through Plugins, feeds the results back, saves the
// actual state through a Store and serves the pod worker
// (WaitForAttachAndMount, UnmountVolumes, PodVolumesUnmounted).
//
// Rules the core keeps:
//
//  1. At most one operation in flight per volume (a volume private to a
//     pod, such as an emptyDir or an inline CSI volume, has a name of its
//     own per pod, so pod-level operations of different pods never wait
//     for each other). The kubelet lets unmounts of different pods of one
//     shared volume run together; podhost serialises them, as the CSI
//     specification asks of a CO.
//  2. Back-off per operation (kind, volume, pod): 500 ms after the first
//     failure, doubling, capped at 2m2s; success forgets it.
//  3. A device is unstaged only when no pod may still have it published
//     (every unpublish succeeded), no desired pod uses it, and the desired
//     state has been populated since the start.
//  4. Uncertain mounts are cleaned with unpublish and unstage, whether or
//     not the target or staging directory exists; any failed unstage
//     leaves the device uncertain, so the next pod stages it again.
//  5. The state saved before an operation starts counts that operation as
//     uncertain, so a restart cleans up what was in flight.
//  6. The state is what was done, the mount table what is (MountTable,
//     mounttable.go): a publish the state holds that the table does not
//     show, found at a restart or before WaitForAttachAndMount lets a
//     pod's containers start, is uncertain, and so is its device's stage;
//     the pod's volume is staged and published again. Records carry the
//     boot ID they were saved in; those of another boot (a reboot) have
//     lost every mount.
//
// Persistence: Store is an interface, implemented by host/state's bbolt
// store (SaveVolumes, LoadVolumes); MemoryStore serves the tests.
// host/node wires Manager into host/node as the lifecycle's Volumes (AddPod
// fills the desired state after a restart before MarkDesiredPopulated);
// the subpackage hostvolumes serves emptyDir and hostPath. StatsGatherer
// keeps the usage of the claims of running pods for the kubelet's volume
// stats: it asks only plugins that declare metrics, never about a volume
// with an operation in flight, and a stats lease holds back (and cuts
// short) the call when a teardown of the volume is due. VolumesInUse is
// what host/node reports as node.status.volumesInUse in Kubernetes mode: a
// shared volume from the moment a pod desires it until its unstage
// succeeded. A volume the cluster attaches (Volume.Attach, decided by
// Attachments, attach.go) is staged and published only once it was
// reported in use (MarkVolumesReportedInUse) and its attachment was found
// (OpVerifyAttached, retried with the back-off), with the attachment's
// publish context; the attachment is forgotten with the device. Still to
// come: ReadWriteOncePod checks and expansion.
//
// A publish carries the pod's MountArgs (fsGroup and its change policy,
// the kubelet's MounterArgs); the set-up code of each volume kind gives
// the volume to the group (host/volumemanager/ownership), never the
// reconciler.
//
// A pod volume directory whose reconstruction fails becomes an unresolved
// placeholder, listed in VolumesInUse, reported (Events: FailedReconstruct
// Volume; Metrics) and asked about again with back-off (OpReconstruct)
// until the plugin rebuilds it. An FC or iSCSI placeholder is never
// unpublished, and while one whose pod no longer desires it stands, no
// volume of its plugin is staged or unstaged, since it may be that
// volume, which another node may have mounted. A CSI placeholder is unpublished once its pod is
// gone, as the kubelet does.
//
// Who may import it: host/node (and cmd/ through it), host/volumeplugins
// and host/state. It imports only the standard library, k8s.io/api and
// k8s.io/apimachinery; never gRPC, go-plugin, proto/ or pluginapi/: the
// plugin adapters (host/volumeplugins) implement Plugins and Classifier
// outside this package.
package volumemanager
