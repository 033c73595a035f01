package scsi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNoDisk is the error of a discovery that found no disk.
var ErrNoDisk = errors.New("no disk found")

// Tree is the node's sysfs and /dev, under the roots Sys and Dev.
type Tree struct {
	Sys string // where sysfs is mounted, "/sys" on a node
	Dev string // where device files are, "/dev" on a node
}

// DevPath is the device file of the kernel name (sdb, dm-0).
func (t Tree) DevPath(name string) string { return filepath.Join(t.Dev, name) }

// resolve follows the /dev/disk link at link one step and returns the
// kernel name it points at. The target must be a device file directly in
// Dev (as ../../sdb is), else the link is not a disk.
func (t Tree) resolve(link string) (string, bool) {
	target, err := os.Readlink(link)
	if err != nil {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(link), target)
	}
	if filepath.Dir(filepath.Clean(target)) != filepath.Clean(t.Dev) {
		return "", false
	}
	return filepath.Base(target), true
}

// Holder returns the device-mapper device (dm-N) whose slaves include the
// disk, or "" when none does.
func (t Tree) Holder(disk string) string {
	entries, _ := os.ReadDir(filepath.Join(t.Sys, "block"))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "dm-") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(t.Sys, "block", e.Name(), "slaves", disk)); err == nil {
			return e.Name()
		}
	}
	return ""
}

// Slaves returns the disks a device-mapper device is built on; none when
// it is not there.
func (t Tree) Slaves(dm string) []string {
	entries, _ := os.ReadDir(filepath.Join(t.Sys, "block", dm, "slaves"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Exists reports whether sysfs shows the block device name.
func (t Tree) Exists(name string) bool {
	_, err := os.Lstat(filepath.Join(t.Sys, "block", name))
	return err == nil
}

// RescanAll asks every SCSI host to scan all channels, targets and LUNs.
func (t Tree) RescanAll() error {
	scans, err := filepath.Glob(filepath.Join(t.Sys, "class", "scsi_host", "*", "scan"))
	if err != nil {
		return err
	}
	var errs []error
	for _, scan := range scans {
		errs = append(errs, writeAttr(scan, "- - -"))
	}
	return errors.Join(errs...)
}

// ScanLUN asks SCSI host host<n> to scan LUN lun of channel 0, target 0.
func (t Tree) ScanLUN(host int, lun string) error {
	return writeAttr(filepath.Join(t.Sys, "class", "scsi_host", fmt.Sprintf("host%d", host), "scan"), "0 0 "+lun)
}

// Delete removes the SCSI disk from the kernel by writing 1 to its delete
// attribute. A disk sysfs does not show is deleted already.
func (t Tree) Delete(disk string) error {
	err := writeAttr(filepath.Join(t.Sys, "block", disk, "device", "delete"), "1")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Disk is a disk found for a volume: the device to use (a multipath
// device when there is one) and the SCSI disks under it.
type Disk struct {
	Name  string   // kernel name: dm-0 or sdb
	Paths []string // the SCSI disks: the slaves of Name, or Name itself
}

// disk describes the disk name: its multipath holder when it has one.
func (t Tree) disk(name string) Disk {
	if IsMultipath(name) {
		return Disk{Name: name, Paths: t.Slaves(name)}
	}
	if dm := t.Holder(name); dm != "" {
		return Disk{Name: dm, Paths: t.Slaves(dm)}
	}
	return Disk{Name: name, Paths: []string{name}}
}

// writeAttr writes value to a sysfs attribute, which must exist.
func writeAttr(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, path, err)
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}

// sortedUnique returns names sorted, without repeats.
func sortedUnique(names []string) []string {
	names = slices.Clone(names)
	slices.Sort(names)
	return slices.Compact(names)
}

// ErrAuth is the error of an iSCSI login refused for its credentials.
var ErrAuth = errors.New("authentication failed")

// IsMultipath reports whether the kernel name is a device-mapper device.
func IsMultipath(name string) bool { return strings.HasPrefix(name, "dm-") }
