// Package volumeplugins owns the host's one adapter of every volume kind
// to the volume manager (Plugins): it implements volumemanager's Plugins,
// Reconstructor, MetricsPlugins and, with Classify, its Classifier.
//
// The host serves emptyDir and hostPath itself (hostvolumes) and the
// volumes whose files come from the API server (apivolumes); every other
// kind goes to a volume plugin over the volume contract
// (proto/volume/v1):
//
//   - a CSI volume to the plugin whose config lists its driver under
//     drivers[].name (volume-csi's config; csi.go), any other driver to
//     the one plugin that declares volume.csi.registration in GetInfo,
//     which takes the drivers registered at run time
//     (RegisterCSIDriver, DeregisterCSIDriver: csiregister.go, called by
//     host/pluginregistration's handler in host/node), staged at
//     <root>/plugins/kubernetes.io~csi/<driver>/<sha256 of the handle>/globalmount
//     when shared and published at its pod's target path, then given to
//     the pod's fsGroup where the driver's fsGroupPolicy says so
//     (ownership.go; Config.FSGroupPolicy reads it), the pod's
//     information in its volume context where the driver asks for it
//     (Config.PodInfoOnMount), and the data of the Secrets its source
//     names (nodeStageSecretRef, nodePublishSecretRef) as the secrets of
//     the stage and the publish, read through Config.Secret for the pod
//     whose volume it is (csisecrets.go; a Secret not read fails the
//     call, transient, before the plugin is asked);
//   - an FC or iSCSI volume to the one plugin that declares volume.fc or
//     volume.iscsi in GetInfo (scsi.go), with the volume context, paths
//     and secrets directory the kubelet's in-tree plugins would use, Attach
//     and Detach when the plugin's GetCapabilities asks for them; once
//     published, a writable filesystem volume of a pod with an fsGroup is
//     given to the group (ownership.go), as those plugins do.
//
// Unpublish of every kind first removes the volume's subPath bind mounts
// of the pod's containers (hostvolumes.CleanSubPaths), as the kubelet's
// unmount does; a failure there fails the unpublish, which is retried.
//
// Every plugin call's error is classified once, here at the gRPC edge, by
// the contract's rule (pluginapi/volumeerr): a call the supervisor did not
// send is transient. Reconstruct rebuilds the pod volume directories a
// restart finds (reconstruct.go, csireconstruct.go: a CSI directory from
// its plugin's record or from its own vol_data.json, csidata.go, which
// Publish writes); InPlace tells whether a publish is still a mount
// (mounttable.go); metrics.go asks plugins for the usage of
// claims, only when they declare metrics twice (GetInfo and
// GetCapabilities).
//
// Who may import it: host/node, which wires it; it imports the volume
// manager, its hostvolumes, apivolumes and ownership, the supervisor and
// the volume contract, never host/node.
package volumeplugins
