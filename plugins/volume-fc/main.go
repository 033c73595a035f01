// Command volume-fc is the podhost volume plugin for Fibre Channel LUNs.
// Attach finds the LUN a volume names, by target WWNs and LUN under
// /dev/disk/by-path or by WWIDs under /dev/disk/by-id, rescanning the SCSI
// hosts through sysfs when it finds no multipath device, and prefers the
// device-mapper holder of the disk. Stage formats the device when it is
// empty and mounts it (or, for a raw block volume, only records it);
// Publish bind-mounts it for a pod and MapBlock maps the device itself.
// Unstage unmounts and cleans the device up (multipath -f, then deleting
// the SCSI disks through sysfs), retrying every 10 s (cleanupInterval) for
// a budget of a minute (cleanupBudget), and a cleanup left unfinished is
// finished by the next Unstage.
// GetMetrics reports statfs figures for filesystems and the device size
// for block volumes; Reconstruct tells what a target path shows.
package main

import "github.com/podhost/podhost/sdk"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { sdk.Serve(newPlugin(version)) }
