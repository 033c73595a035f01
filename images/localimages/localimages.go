// Package localimages defines podhost's two images that are built on the
// machine instead of pulled: the pause image every sandbox uses and a busybox
// image for test and benchmark containers. It builds the pause binary from
// images/pause with CGO_ENABLED=0, takes busybox from Debian's busybox-static
// package, and writes both as OCI archives with images/ociarchive.
//
// The names carry a registry host (podhost.local) so that they are already
// normalized references: containerd's CRI plugin stores and looks images up
// by normalized name, and a name without a host would become
// docker.io/library/… Nothing named podhost.local is ever pulled.
//
// Test setup (test/crisetup), hack/mkimage, the benchmarks under bench/ and
// the tests of runtime-containerd and test/e2e import this package.
package localimages

import (
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/podhost/podhost/images/ociarchive"
)

// Image names as containerd and CRI know them.
const (
	PauseName   = "podhost.local/pause:1"
	BusyboxName = "podhost.local/busybox:1"
)

// BusyboxPath is where Debian's busybox-static package installs busybox.
const BusyboxPath = "/bin/busybox"

// PausePackage is the Go package of the pause program.
const PausePackage = "github.com/podhost/podhost/images/pause"

// BusyboxApplets are the commands the busybox image links to /bin/busybox.
var BusyboxApplets = []string{
	"sh", "ash", "echo", "sleep", "cat", "ls", "true", "false", "env", "kill",
	"ps", "id", "pwd", "mkdir", "rm", "touch", "test", "[", "printf", "date",
	"head", "tail", "grep", "sed", "wc", "hostname", "mount", "df", "du", "stat",
	"nslookup", "wget", "uname", "cp", "mv", "ln", "chmod", "timeout", "seq", "yes",
	// kubectl cp runs tar in the container; stty reads a terminal's size.
	"tar", "stty",
}

const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Pause returns the pause image around a static pause binary.
func Pause(pauseBinary []byte) ociarchive.Image {
	return ociarchive.Image{
		Name:    PauseName,
		Config:  ociarchive.RuntimeConfig{Entrypoint: []string{"/pause"}, Env: []string{defaultPath}, WorkingDir: "/"},
		Entries: []ociarchive.Entry{ociarchive.File("/pause", 0o755, pauseBinary)},
	}
}

// Busybox returns the busybox image around a static busybox binary: it holds
// /bin/busybox, a symlink per applet in BusyboxApplets, and /tmp; its
// default command is sh.
func Busybox(busybox []byte) ociarchive.Image {
	entries := []ociarchive.Entry{
		ociarchive.File("/bin/busybox", 0o755, busybox),
		ociarchive.Dir("/tmp", 0o777|fs.ModeSticky),
		ociarchive.Dir("/etc", 0o755),
		ociarchive.Dir("/root", 0o700),
		ociarchive.Dir("/var", 0o755),
	}
	for _, applet := range BusyboxApplets {
		entries = append(entries, ociarchive.Symlink("/bin/"+applet, "busybox"))
	}
	return ociarchive.Image{
		Name:    BusyboxName,
		Config:  ociarchive.RuntimeConfig{Cmd: []string{"sh"}, Env: []string{defaultPath}, WorkingDir: "/"},
		Entries: entries,
	}
}

// BuildPause compiles the pause program into out as a static executable. It
// runs the go command, so it must run inside this module.
func BuildPause(ctx context.Context, out string) error { return BuildStatic(ctx, PausePackage, out) }

// CurlPackage is the Go package of the conformance agnhost image's curl.
const CurlPackage = "github.com/podhost/podhost/images/curl"

// BuildStatic builds the Go main package pkg of this module into out, a
// static binary (it runs the go command, so it must run inside this
// module).
func BuildStatic(ctx context.Context, pkg, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("build %s: %w", pkg, err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w: %s", pkg, err, strings.TrimSpace(string(output)))
	}
	return CheckStatic(out)
}

// CheckStatic returns an error unless name is an ELF executable without a
// program interpreter, that is, statically linked.
func CheckStatic(name string) error {
	f, err := elf.Open(name)
	if err != nil {
		return fmt.Errorf("check %s is static: %w", name, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", name)
		}
	}
	return nil
}

// Archive is one image archive written by WriteArchives.
type Archive struct {
	Name    string // image name
	Path    string // archive file
	Written ociarchive.Written
}

// WriteArchives builds the pause binary, reads busybox from BusyboxPath and
// writes pause.tar and busybox.tar into dir.
func WriteArchives(ctx context.Context, dir string) ([]Archive, error) {
	pauseBin := filepath.Join(dir, "pause")
	if err := BuildPause(ctx, pauseBin); err != nil {
		return nil, err
	}
	pause, err := os.ReadFile(pauseBin)
	if err != nil {
		return nil, fmt.Errorf("read pause binary: %w", err)
	}
	if err := CheckStatic(BusyboxPath); err != nil {
		return nil, fmt.Errorf("busybox image needs Debian's busybox-static (run hack/install-deps.sh): %w", err)
	}
	busybox, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return nil, fmt.Errorf("read busybox: %w", err)
	}
	var out []Archive
	for _, img := range []struct {
		file  string
		image ociarchive.Image
	}{
		{"pause.tar", Pause(pause)},
		{"busybox.tar", Busybox(busybox)},
	} {
		name := filepath.Join(dir, img.file)
		w, err := ociarchive.WriteFile(name, img.image)
		if err != nil {
			return nil, err
		}
		out = append(out, Archive{Name: img.image.Name, Path: name, Written: w})
	}
	return out, nil
}
