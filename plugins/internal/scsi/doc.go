// Package scsi is the device layer the FC and iSCSI volume plugins share:
// it finds SCSI disks and their multipath (device-mapper) holders under a
// sysfs root and a /dev root, asks SCSI hosts to rescan, deletes SCSI
// devices through sysfs, reads the iSCSI sessions sysfs shows, runs the
// node's commands (iscsiadm, multipath) and reads a block device's size.
// Every root and command is configurable, so the same code runs against a
// fake tree in tests (plugins/internal/scsitest). Only the plugins
// under plugins/ import it.
package scsi
