// Package scsivolume is the volume logic the FC and iSCSI plugins share,
// and its gRPC server: a Transport finds the volume's disk (an FC scan, an
// iSCSI login) and releases it again; this package formats and mounts the
// disk on the staging path, bind-mounts it for pods, maps it as a raw
// block device, reports metrics, and keeps a record of each staged volume
// in the plugin's state directory, so that an Unstage interrupted after
// the unmount still releases the disk on retry, and Reconstruct can tell
// what a target path shows. Only volume-fc and volume-iscsi import it.
package scsivolume
