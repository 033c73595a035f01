package conformance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/images/ociarchive"
)

// The image names `e2e.test --list-images` prints in k8s.io/kubernetes
// v1.37.2 that are built here. Another release names other tags; a name
// not in this list is never stood in for, it is reported unavailable.
const (
	AgnhostImage    = "registry.k8s.io/e2e-test-images/agnhost:2.66.1"
	BusyboxImage    = "registry.k8s.io/e2e-test-images/busybox:1.37.0-2"
	NonewprivsImage = "registry.k8s.io/e2e-test-images/nonewprivs:1.4"
	NonrootImage    = "registry.k8s.io/e2e-test-images/nonroot:1.5"
	PauseImage      = "registry.k8s.io/pause:3.10.2"
	// GlibcDNSTestingImage is Debian with glibc and dnsutils
	// (GlibcDNSTestingVersion).
	GlibcDNSTestingImage = "registry.k8s.io/e2e-test-images/glibc-dns-testing:" + GlibcDNSTestingVersion
)

// GlibcDNSTestingVersion is the glibc-dns-testing image's tag, the one
// hack/glibc-dns-testing.sh names its cached root filesystem after.
const GlibcDNSTestingVersion = "2.1.1"

// BusyboxVersion is the upstream busybox release hack/busybox.sh builds for
// the images, the one the busybox image's tag names.
const BusyboxVersion = "1.37.0"

// Sources are the files the images are made of.
type Sources struct {
	// Busybox is a static busybox, the base of every image but pause:
	// upstream's, built from its source with its defconfig by
	// hack/busybox.sh (SourcesIn). Debian's busybox-static differs where
	// specs look (CheckBusybox).
	Busybox string
	// Pause is podhost's static pause binary (images/pause).
	Pause string
	// Agnhost and Nonewprivs are built from k8s.io/kubernetes
	// test/images/agnhost and test/images/nonewprivs at the suite's
	// release (hack/e2e-binaries.sh).
	Agnhost, Nonewprivs string
	// AgnhostFiles holds porter's localhost.crt and localhost.key from
	// test/images/agnhost/porter, which the agnhost image carries at /.
	AgnhostFiles string
	// Bash is a static bash (Debian's bash-static), the agnhost image's
	// /bin/bash, which probe specs run; empty or missing: no bash there.
	Bash string
	// Curl is the agnhost image's /usr/bin/curl (images/curl), which
	// lifecycle hook specs run; empty: WriteImages builds it.
	Curl string
	// GlibcDNSTesting is the root filesystem tar of the
	// glibc-dns-testing image, Debian bookworm (minbase, slimmed) with
	// dnsutils and /coredns, as hack/glibc-dns-testing.sh builds it.
	GlibcDNSTesting string
}

// Unavailable is an image the suite names that is not built here.
type Unavailable struct {
	Name, Reason string
}

// builder makes one image from the sources and the busybox applets.
type builder func(src Sources, applets []string) (ociarchive.Image, error)

var builders = map[string]builder{
	BusyboxImage:    busyboxImage,
	AgnhostImage:    agnhostImage,
	NonewprivsImage: nonewprivsImage,
	NonrootImage:    nonrootImage,
	PauseImage:      pauseImage,

	GlibcDNSTestingImage: glibcDNSTestingImage,
}

// unavailableReasons says why an image the suite names is not built, for
// the names known to be used by node specs; any other name gets
// reasonUnknownImage.
var unavailableReasons = map[string]string{
	"registry.k8s.io/e2e-test-images/agnhost:2.55":     "an older agnhost release (AgnhostPrev); only the suite's own release is built from source",
	"gcr.io/k8s-authenticated-test/agnhost:2.6":        "lives in a private registry the suite authenticates to; no registry here",
	"invalid.registry.k8s.io/invalid/alpine:3.1":       "a pull that must fail from a registry; no registry here",
	"registry.k8s.io/e2e-test-images/nginx:1.27.0-2":   "nginx on Debian; a stand-in server would change what the spec tests",
	"registry.k8s.io/e2e-test-images/nginx:1.28.0-2":   "nginx on Debian; a stand-in server would change what the spec tests",
	"registry.k8s.io/e2e-test-images/httpd:2.4.39-4":   "Apache httpd; a stand-in server would change what the spec tests",
	"registry.k8s.io/e2e-test-images/httpd:2.4.38-4":   "Apache httpd; a stand-in server would change what the spec tests",
	"registry.k8s.io/e2e-test-images/kitten:1.8":       "an image used as an image volume; not built here",
	"registry.k8s.io/e2e-test-images/nautilus:1.8":     "an image used as an image volume; not built here",
	"registry.k8s.io/e2e-test-images/ipc-utils:1.4":    "ipc tools on Debian; not built here",
	"registry.k8s.io/e2e-test-images/volume/nfs:1.6.0": "an NFS server; the kernel here has no NFS server support in containers",
}

const reasonUnknownImage = "no local build for this image (only agnhost, busybox, glibc-dns-testing, nonewprivs, nonroot and pause are built)"

// Plan splits the image names the suite lists into the images built here
// and the ones that are not, each with its reason. Both come back sorted
// by name.
func Plan(names []string, src Sources) ([]ociarchive.Image, []Unavailable, error) {
	var (
		images  []ociarchive.Image
		missing []Unavailable
		applets []string
	)
	names = slices.Clone(names)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		build, ok := builders[name]
		if !ok {
			reason, known := unavailableReasons[name]
			if !known {
				reason = reasonUnknownImage
			}
			missing = append(missing, Unavailable{Name: name, Reason: reason})
			continue
		}
		if applets == nil {
			var err error
			if applets, err = busyboxApplets(src.Busybox); err != nil {
				return nil, nil, err
			}
		}
		img, err := build(src, applets)
		if err != nil {
			return nil, nil, fmt.Errorf("image %s: %w", name, err)
		}
		img.Name = name
		images = append(images, img)
	}
	return images, missing, nil
}

// ParseImageList reads the output of `e2e.test --list-images`: one image
// name a line.
func ParseImageList(out []byte) []string {
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	return names
}

// busyboxApplets asks the busybox binary for its applets.
func busyboxApplets(busybox string) ([]string, error) {
	if err := localimages.CheckStatic(busybox); err != nil {
		return nil, fmt.Errorf("the images need a static busybox (hack/busybox.sh builds it): %w", err)
	}
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", busybox, err)
	}
	var applets []string
	for _, a := range strings.Fields(string(out)) {
		// [ and [[ are applets too; only a name with a slash could escape
		// /bin, and the binary itself is not linked to itself.
		if a != "busybox" && !strings.Contains(a, "/") {
			applets = append(applets, a)
		}
	}
	if len(applets) == 0 {
		return nil, fmt.Errorf("%s --list printed no applets", busybox)
	}
	return applets, nil
}

const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// The users and groups of the busybox base, as in the upstream busybox
// image.
const (
	basePasswd = `root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
`
	baseGroup = `root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
wheel:x:10:root
mail:x:12:
www-data:x:33:
operator:x:37:
users:x:100:
nogroup:x:65534:
`
)

// busyboxBase is the upstream busybox image's layout: the static binary at
// /bin/busybox, a link in /bin for each applet, /etc/passwd and
// /etc/group, and the usual empty directories.
func busyboxBase(src Sources, applets []string, passwd, group string) ([]ociarchive.Entry, error) {
	bb, err := os.ReadFile(src.Busybox)
	if err != nil {
		return nil, err
	}
	entries := []ociarchive.Entry{
		ociarchive.File("/bin/busybox", 0o755, bb),
		ociarchive.File("/etc/passwd", 0o644, []byte(passwd)),
		ociarchive.File("/etc/group", 0o644, []byte(group)),
		ociarchive.Dir("/tmp", 0o777|fs.ModeSticky),
		ociarchive.Dir("/root", 0o700),
		ociarchive.Dir("/home", 0o755),
		ociarchive.Dir("/var", 0o755),
		ociarchive.Dir("/usr/bin", 0o755),
		ociarchive.Dir("/usr/sbin", 0o755),
	}
	for _, a := range applets {
		entries = append(entries, ociarchive.Symlink("/bin/"+a, "busybox"))
	}
	return entries, nil
}

func busyboxImage(src Sources, applets []string) (ociarchive.Image, error) {
	entries, err := busyboxBase(src, applets, basePasswd, baseGroup)
	return ociarchive.Image{
		Config:  ociarchive.RuntimeConfig{Cmd: []string{"sh"}, Env: []string{defaultPath}},
		Entries: entries,
	}, err
}

// agnhostImage follows test/images/agnhost/Dockerfile on the busybox base
// instead of alpine: /agnhost with /agnhost-2 linked to it, porter's
// certificate and key, /uploads for netexec, the user and group a
// supplemental-groups spec expects in the image, Debian's static bash as
// /bin/bash when it is installed (hack/install-deps.sh), and podhost's
// minimal curl (images/curl) as /usr/bin/curl.
func agnhostImage(src Sources, applets []string) (ociarchive.Image, error) {
	passwd := basePasswd + "user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n"
	group := baseGroup + "user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n"
	entries, err := busyboxBase(src, applets, passwd, group)
	if err != nil {
		return ociarchive.Image{}, err
	}
	agnhost, err := readStatic(src.Agnhost)
	if err != nil {
		return ociarchive.Image{}, err
	}
	entries = append(entries,
		ociarchive.File("/agnhost", 0o755, agnhost),
		ociarchive.Symlink("/agnhost-2", "agnhost"),
		ociarchive.Dir("/uploads", 0o755),
		ociarchive.Dir("/home/user-defined-in-image", 0o755),
	)
	if src.Bash != "" {
		if bash, err := readStatic(src.Bash); err == nil {
			entries = append(entries, ociarchive.File("/bin/bash", 0o755, bash))
		}
	}
	if src.Curl != "" {
		curl, err := readStatic(src.Curl)
		if err != nil {
			return ociarchive.Image{}, err
		}
		entries = append(entries, ociarchive.File("/usr/bin/curl", 0o755, curl))
	}
	for _, f := range []string{"localhost.crt", "localhost.key"} {
		data, err := os.ReadFile(filepath.Join(src.AgnhostFiles, f))
		if err != nil {
			return ociarchive.Image{}, err
		}
		entries = append(entries, ociarchive.File("/"+f, 0o644, data))
	}
	return ociarchive.Image{
		Config:  ociarchive.RuntimeConfig{Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"}, Env: []string{defaultPath}},
		Entries: entries,
	}, nil
}

// nonewprivsImage follows test/images/nonewprivs/Dockerfile: nnp, set-uid,
// in /usr/local/bin.
func nonewprivsImage(src Sources, applets []string) (ociarchive.Image, error) {
	entries, err := busyboxBase(src, applets, basePasswd, baseGroup)
	if err != nil {
		return ociarchive.Image{}, err
	}
	nnp, err := readStatic(src.Nonewprivs)
	if err != nil {
		return ociarchive.Image{}, err
	}
	entries = append(entries, ociarchive.File("/usr/local/bin/nnp", 0o755|fs.ModeSetuid, nnp))
	return ociarchive.Image{
		Config:  ociarchive.RuntimeConfig{Cmd: []string{"nnp"}, Env: []string{defaultPath}},
		Entries: entries,
	}, nil
}

// nonrootImage follows test/images/nonroot/Dockerfile (USER 1234), on the
// busybox base instead of debian-base.
func nonrootImage(src Sources, applets []string) (ociarchive.Image, error) {
	img, err := busyboxImage(src, applets)
	img.Config.User = "1234"
	return img, err
}

// pauseImage is podhost's pause program as the upstream pause image ships
// it: /pause as the entrypoint, run as 65535:65535.
func pauseImage(src Sources, _ []string) (ociarchive.Image, error) {
	pause, err := readStatic(src.Pause)
	if err != nil {
		return ociarchive.Image{}, err
	}
	return ociarchive.Image{
		Config:  ociarchive.RuntimeConfig{Entrypoint: []string{"/pause"}, Env: []string{defaultPath}, User: "65535:65535"},
		Entries: []ociarchive.Entry{ociarchive.File("/pause", 0o755, pause)},
	}, nil
}

// glibcDNSTestingImage follows test/images/glibc-dns-testing/Dockerfile
// from the root filesystem hack/glibc-dns-testing.sh builds: Debian
// bookworm as debian:bookworm-slim has it, with dnsutils and /coredns. Its
// config is the slim image's (bash, the default PATH); the Dockerfile sets
// none of its own.
func glibcDNSTestingImage(src Sources, _ []string) (ociarchive.Image, error) {
	f, err := os.Open(src.GlibcDNSTesting)
	if err != nil {
		return ociarchive.Image{}, fmt.Errorf("its root filesystem (hack/glibc-dns-testing.sh builds it): %w", err)
	}
	defer f.Close()
	entries, err := ociarchive.ReadRootfs(f)
	if err != nil {
		return ociarchive.Image{}, fmt.Errorf("%s: %w", src.GlibcDNSTesting, err)
	}
	return ociarchive.Image{
		Config:  ociarchive.RuntimeConfig{Cmd: []string{"bash"}, Env: []string{defaultPath}},
		Entries: entries,
	}, nil
}

// readStatic reads a binary that must be static: the images carry no libc.
func readStatic(path string) ([]byte, error) {
	if err := localimages.CheckStatic(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// SourcesIn returns the sources of the images in dir, the cache directory
// hack/e2e-binaries.sh fills (kube-VERSION), with the busybox
// hack/busybox.sh builds next to it in the same cache
// (busybox-VERSION/busybox) and the root filesystem hack/glibc-dns-testing.sh
// builds there (glibc-dns-testing-VERSION/rootfs.tar). Pause and Curl are
// left empty: WriteImages builds them.
func SourcesIn(dir string) Sources {
	return Sources{
		Busybox:         filepath.Join(filepath.Dir(dir), "busybox-"+BusyboxVersion, "busybox"),
		GlibcDNSTesting: filepath.Join(filepath.Dir(dir), "glibc-dns-testing-"+GlibcDNSTestingVersion, "rootfs.tar"),
		Agnhost:         filepath.Join(dir, "agnhost"), Nonewprivs: filepath.Join(dir, "nonewprivs"),
		AgnhostFiles: filepath.Join(dir, "agnhost-porter"),
		Bash:         "/bin/bash-static",
	}
}

// CheckBusybox runs busybox the two ways in which Debian's busybox-static
// made specs fail that pass with the upstream images: its sh must keep
// environment variables whose names are not identifiers (`sh -c env` with
// data-1=value-1, the ConfigMap and Secrets "consumable via the
// environment" specs; Debian reverts upstream ash there), and its nc must
// have -u (the node-pod UDP spec runs `nc -w 1 -u` in the agnhost image).
func CheckBusybox(ctx context.Context, busybox string) error {
	var problems []error
	env := exec.CommandContext(ctx, busybox, "sh", "-c", "env")
	env.Env = []string{"data-1=value-1"}
	out, err := env.Output()
	if err != nil {
		return fmt.Errorf("%s sh -c env: %w", busybox, err)
	}
	if !slices.Contains(strings.Split(string(out), "\n"), "data-1=value-1") {
		problems = append(problems, errors.New("its sh drops the environment variable data-1 (a name that is not an identifier)"))
	}
	// nc --help prints the usage and exits 1.
	help, _ := exec.CommandContext(ctx, busybox, "nc", "--help").CombinedOutput()
	if !ncHasUDP(string(help)) {
		problems = append(problems, errors.New("its nc has no -u (UDP)"))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s is not upstream busybox as the images need it (hack/busybox.sh builds that): %w", busybox, errors.Join(problems...))
	}
	return nil
}

// ncHasUDP says whether busybox nc's usage lists the option -u.
func ncHasUDP(usage string) bool {
	for _, line := range strings.Split(usage, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "-u" {
			return true
		}
	}
	return false
}

// ListImages runs `e2e.test --list-images`.
func ListImages(ctx context.Context, e2eTest string) ([]string, error) {
	out, err := exec.CommandContext(ctx, e2eTest, "--list-images").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-images: %w", e2eTest, err)
	}
	return ParseImageList(out), nil
}

// Archive is an image archive WriteImages wrote.
type Archive struct {
	Name, Path string
}

// WriteImages writes into dir an OCI archive of each image of names that
// is built here (Plan), and returns the others with their reasons. It
// refuses a busybox that fails CheckBusybox. Without src.Pause or src.Curl
// it builds the pause or curl program into dir first (it runs the go
// command, so it must run inside this module).
func WriteImages(ctx context.Context, dir string, names []string, src Sources) ([]Archive, []Unavailable, error) {
	if err := CheckBusybox(ctx, src.Busybox); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if src.Pause == "" {
		src.Pause = filepath.Join(dir, "pause")
		if err := localimages.BuildPause(ctx, src.Pause); err != nil {
			return nil, nil, err
		}
	}
	if src.Curl == "" {
		src.Curl = filepath.Join(dir, "curl")
		if err := localimages.BuildStatic(ctx, localimages.CurlPackage, src.Curl); err != nil {
			return nil, nil, err
		}
	}
	images, unavailable, err := Plan(names, src)
	if err != nil {
		return nil, nil, err
	}
	var out []Archive
	for i, img := range images {
		path := filepath.Join(dir, fmt.Sprintf("e2e-%d.tar", i))
		if _, err := ociarchive.WriteFile(path, img); err != nil {
			return nil, nil, err
		}
		out = append(out, Archive{Name: img.Name, Path: path})
	}
	return out, unavailable, nil
}
