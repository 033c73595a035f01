package scsitest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/plugins/internal/scsi"
)

// Reporter is what a Fake reports its setup failures to: a testing.TB,
// or a command's (cmd/scsifake).
type Reporter interface {
	Helper()
	Fatal(args ...any)
}

// Fake is a sysfs and /dev tree under Root, with the fake commands in Bin.
type Fake struct {
	t    Reporter
	Root string
	Tree scsi.Tree
	Bin  string
}

// New builds an empty tree with SCSI hosts host0 and host1 and the fake
// commands.
func New(t testing.TB) *Fake {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Build(t, t.TempDir(), self)
}

// Build is New in root, with the fake commands links to tool: a binary
// that calls Main first.
func Build(t Reporter, root, tool string) *Fake {
	t.Helper()
	f := Open(t, root)
	for _, d := range []string{"sys/block", "sys/class/scsi_host", "dev/disk/by-path", "dev/disk/by-id", "bin"} {
		f.mkdir(filepath.Join(root, d))
	}
	for i := range 2 {
		f.file(filepath.Join(f.Tree.Sys, "class", "scsi_host", fmt.Sprintf("host%d", i), "scan"), "")
	}
	for _, name := range []string{"multipath", "iscsiadm"} {
		if err := os.Symlink(tool, filepath.Join(f.Bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// Open is the Fake that Build made in root.
func Open(t Reporter, root string) *Fake {
	return &Fake{t: t, Root: root, Tree: treeAt(root), Bin: filepath.Join(root, "bin")}
}

// Command is the path of the fake tool (multipath, iscsiadm).
func (f *Fake) Command(tool string) string { return filepath.Join(f.Bin, tool) }

func (f *Fake) mkdir(path string) {
	f.t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		f.t.Fatal(err)
	}
}

func (f *Fake) file(path, content string) {
	f.t.Helper()
	f.mkdir(filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *Fake) link(target, path string) {
	f.t.Helper()
	f.mkdir(filepath.Dir(path))
	if err := os.Symlink(target, path); err != nil {
		f.t.Fatal(err)
	}
}

// AddDisk adds the SCSI disk name (sdb): its sysfs entry with a delete
// attribute and its device file, a link to backing (a loop device), or an
// empty file when backing is "".
func (f *Fake) AddDisk(name, backing string) {
	f.t.Helper()
	addDisk(f.Tree, name, backing)
}

func addDisk(t scsi.Tree, name, backing string) {
	_ = os.MkdirAll(filepath.Join(t.Sys, "block", name, "device"), 0o755)
	_ = os.WriteFile(filepath.Join(t.Sys, "block", name, "device", "delete"), nil, 0o644)
	if backing == "" {
		_ = os.WriteFile(t.DevPath(name), nil, 0o644)
	} else {
		_ = os.Symlink(backing, t.DevPath(name))
	}
}

// FCLink is the by-path name of an FC LUN.
func FCLink(wwn, lun string) string { return "pci-0000:41:00.0-fc-0x" + wwn + "-lun-" + lun }

// AddFCLink links the FC LUN's by-path name to disk.
func (f *Fake) AddFCLink(wwn, lun, disk string) {
	f.link("../../"+disk, filepath.Join(f.Tree.Dev, "disk", "by-path", FCLink(wwn, lun)))
}

// AddByID links /dev/disk/by-id/scsi-<wwid> to disk.
func (f *Fake) AddByID(wwid, disk string) {
	f.link("../../"+disk, filepath.Join(f.Tree.Dev, "disk", "by-id", "scsi-"+wwid))
}

// AddMultipath adds the device-mapper device dm over slaves, its device
// file a link to backing.
func (f *Fake) AddMultipath(dm, backing string, slaves ...string) {
	f.t.Helper()
	for _, s := range slaves {
		f.file(filepath.Join(f.Tree.Sys, "block", dm, "slaves", s), "")
	}
	f.mkdir(filepath.Join(f.Tree.Sys, "block", dm))
	f.link(backing, f.Tree.DevPath(dm))
}

// Deleted reports whether 1 was written to the disk's delete attribute.
func (f *Fake) Deleted(disk string) bool {
	b, err := os.ReadFile(filepath.Join(f.Tree.Sys, "block", disk, "device", "delete"))
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// Scanned returns what was written to host<n>'s scan attribute.
func (f *Fake) Scanned(host int) string {
	b, _ := os.ReadFile(filepath.Join(f.Tree.Sys, "class", "scsi_host", fmt.Sprintf("host%d", host), "scan"))
	return string(b)
}

// Exists reports whether the path under Root exists.
func (f *Fake) Exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(f.Root, rel))
	return err == nil
}

// Loop attaches a new loop device backed by a sparse file of size bytes
// and returns its path; it is detached when the test ends. It needs root.
func Loop(t testing.TB, size int64) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "lun.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "losetup", "-f", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup -f --show %s: %v", img, describe(err))
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		// Not the test's context: it has ended by now.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 30*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// NeedRoot marks a test that mounts or attaches loop devices: skipped
// under -short (make unit), and without -short (make test) failed when
// the effective user is not root (never a user lookup).
func NeedRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("mounts and loop devices: not under -short")
	}
	if os.Geteuid() != 0 {
		t.Fatal("needs root: mounts and loop devices; run it as root")
	}
}

func describe(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Sprintf("%v: %s", err, ee.Stderr)
	}
	return err.Error()
}
