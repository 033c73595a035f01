package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/podhost/podhost/images/ociarchive"
	"github.com/podhost/podhost/test/kubecluster"
)

func TestSourcesInTakesGlibcDNSTestingFromTheCache(t *testing.T) {
	src := SourcesIn("/cache/kube-v1.37.2")
	if want := "/cache/glibc-dns-testing-" + GlibcDNSTestingVersion + "/rootfs.tar"; src.GlibcDNSTesting != want {
		t.Errorf("glibc-dns-testing root filesystem %q; want hack/glibc-dns-testing.sh's %q", src.GlibcDNSTesting, want)
	}
	if _, ok := builders[GlibcDNSTestingImage]; !ok {
		t.Errorf("%s is not built", GlibcDNSTestingImage)
	}
	if _, ok := unavailableReasons[GlibcDNSTestingImage]; ok {
		t.Errorf("%s is built and still has a reason not to be", GlibcDNSTestingImage)
	}
}

// TestBuiltGlibcDNSTestingIsWhatTheSpecsNeed checks the image built from
// hack/glibc-dns-testing.sh's root filesystem (make test builds it first,
// on every machine; missing, the test fails): the "Override
// hostname of Pod" specs run `sh -c "echo $(hostname)';'$(hostname -f)';'"`
// in it, so it must carry sh and Debian's hostname, dynamically linked
// against glibc, with glibc's loader and the NSS configuration and module
// that read /etc/hosts; and dig and /coredns, as upstream's does.
func TestBuiltGlibcDNSTestingIsWhatTheSpecsNeed(t *testing.T) {
	bins, _ := kubecluster.FindBinaries()
	rootfs := SourcesIn(filepath.Dir(bins.APIServer)).GlibcDNSTesting
	if _, err := os.Stat(rootfs); err != nil {
		needBuilt(t, "the glibc-dns-testing root filesystem", err)
	}
	img, err := glibcDNSTestingImage(Sources{GlibcDNSTesting: rootfs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]ociarchive.Entry{}
	for _, e := range img.Entries {
		byPath[strings.TrimPrefix(e.Path, "./")] = e
	}
	// resolve follows symlinks the way the container's kernel would (merged
	// /usr: /bin is a link to usr/bin).
	var resolve func(p string, depth int) (ociarchive.Entry, bool)
	resolve = func(p string, depth int) (ociarchive.Entry, bool) {
		if depth > 10 {
			return ociarchive.Entry{}, false
		}
		parts := strings.Split(p, "/")
		for i := range parts {
			prefix := strings.Join(parts[:i+1], "/")
			e, ok := byPath[prefix]
			if !ok {
				return ociarchive.Entry{}, false
			}
			if e.Type == ociarchive.TypeSymlink {
				target := e.Target
				if !strings.HasPrefix(target, "/") {
					target = filepath.Join(filepath.Dir(prefix), target)
				}
				rest := append([]string{strings.TrimPrefix(filepath.Clean(target), "/")}, parts[i+1:]...)
				return resolve(strings.Join(rest, "/"), depth+1)
			}
		}
		return byPath[p], true
	}
	for _, p := range []string{"bin/sh", "bin/hostname", "usr/bin/dig", "usr/bin/nslookup", "coredns"} {
		switch e, ok := resolve(p, 0); {
		case !ok:
			t.Errorf("/%s is missing", p)
		case e.Type != ociarchive.TypeFile || e.Mode&0o111 == 0:
			t.Errorf("/%s is a %v of mode %v; want an executable file", p, e.Type, e.Mode)
		}
	}
	if e, _ := resolve("bin/hostname", 0); !bytes.Contains(e.Data, []byte("libc.so.6")) {
		t.Error("/bin/hostname does not link against glibc's libc.so.6")
	}
	for _, p := range []string{"lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6", "lib/x86_64-linux-gnu/libnss_files.so.2", "etc/debian_version"} {
		if e, ok := resolve(p, 0); !ok || e.Type != ociarchive.TypeFile {
			t.Errorf("/%s is missing", p)
		}
	}
	nss, _ := resolve("etc/nsswitch.conf", 0)
	var hosts []string
	for _, line := range strings.Split(string(nss.Data), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "hosts:" {
			hosts = f[1:]
		}
	}
	if !slices.Contains(hosts, "files") {
		t.Errorf("/etc/nsswitch.conf hosts: %q; want files (/etc/hosts) among them", hosts)
	}
	if v, _ := resolve("etc/debian_version", 0); !strings.HasPrefix(string(v.Data), "12.") {
		t.Errorf("/etc/debian_version %q; want bookworm's 12.x", v.Data)
	}
	// What the Dockerfile removes and what the runtime mounts.
	for _, p := range []string{"var/lib/apt/lists/lock", "etc/hostname", "etc/hosts", "etc/resolv.conf", "dev/null"} {
		if _, ok := byPath[p]; ok {
			t.Errorf("/%s is in the image", p)
		}
	}
	if !slices.Equal(img.Config.Cmd, []string{"bash"}) {
		t.Errorf("config %+v; want debian:bookworm-slim's CMD bash", img.Config)
	}
}
