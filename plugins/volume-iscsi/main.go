// Command volume-iscsi is the podhost volume plugin for iSCSI LUNs. Stage
// logs in to each portal of the volume that has no session yet, with
// iscsiadm and the kubelet's argument sequences (discovery and session
// CHAP from the request's secrets or secret files), scans the LUN through
// sysfs, waits for /dev/disk/by-path/ip-PORTAL-iscsi-IQN-lun-N and, with
// several portals, for their multipath device; then it formats the device
// when it is empty and mounts it, or, for a raw block volume, records it
// for MapBlock. Publish bind-mounts it for a pod. Unstage unmounts,
// flushes the multipath device, deletes the SCSI disks through sysfs, and
// logs out of the target only when no other staged volume uses it (the
// session-busy rule). GetMetrics reports statfs figures for filesystems
// and the device size for block volumes; Reconstruct tells what a target
// path shows.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
