package conformance

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/images/ociarchive"
	"github.com/podhost/podhost/test/kubecluster"
)

func TestSourcesInTakesBusyboxFromTheCache(t *testing.T) {
	src := SourcesIn("/cache/kube-v1.37.2")
	if want := "/cache/busybox-" + BusyboxVersion + "/busybox"; src.Busybox != want {
		t.Errorf("busybox %q; want hack/busybox.sh's build %q, not Debian's %q", src.Busybox, want, localimages.BusyboxPath)
	}
}

// TestCheckBusyboxRefusesDebians runs the check on Debian's busybox-static,
// which failed the specs the check stands for: its sh drops data-1, its nc
// has no -u.
func TestCheckBusyboxRefusesDebians(t *testing.T) {
	if err := localimages.CheckStatic(localimages.BusyboxPath); err != nil {
		t.Fatalf("needs Debian's busybox-static (hack/install-deps.sh): %v", err)
	}
	err := CheckBusybox(t.Context(), localimages.BusyboxPath)
	if err == nil || !strings.Contains(err.Error(), "data-1") || !strings.Contains(err.Error(), "no -u") {
		t.Fatalf("CheckBusybox(Debian's busybox) = %v; want both the dropped data-1 and the missing nc -u", err)
	}
}

func TestNCHasUDP(t *testing.T) {
	for usage, want := range map[string]bool{
		"Usage: nc [OPTIONS] HOST PORT\n\t-l\tListen mode\n\t-u\tUDP mode\n": true,
		"Usage: nc [-iN] [-wN] [-l]\n\t-w SEC\tConnect timeout\n":            false,
		"\t-uu\tnot it\n\t-z\tZero-I/O mode (scanning), -u elsewhere\n":      false,
	} {
		if got := ncHasUDP(usage); got != want {
			t.Errorf("ncHasUDP(%q) = %v; want %v", usage, got, want)
		}
	}
}

// TestBuiltBusyboxIsWhatTheImagesNeed checks hack/busybox.sh's build (make
// test builds it first, on every machine; missing, the test fails): it passes
// CheckBusybox, its nc sends a UDP datagram as the node-pod UDP spec does,
// and the busybox image carries it with a link per applet.
func TestBuiltBusyboxIsWhatTheImagesNeed(t *testing.T) {
	bins, _ := kubecluster.FindBinaries()
	busybox := SourcesIn(filepath.Dir(bins.APIServer)).Busybox
	if _, err := os.Stat(busybox); err != nil {
		needBuilt(t, "upstream busybox", err)
	}
	if err := CheckBusybox(t.Context(), busybox); err != nil {
		t.Fatal(err)
	}

	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	port := strconv.Itoa(conn.LocalAddr().(*net.UDPAddr).Port)
	nc := exec.CommandContext(t.Context(), busybox, "nc", "-w", "1", "-u", "127.0.0.1", port)
	nc.Stdin = strings.NewReader("hostname\n")
	if out, err := nc.CombinedOutput(); err != nil {
		t.Fatalf("nc -w 1 -u: %v\n%s", err, out)
	}
	// The datagram was sent before nc exited; the deadline only keeps a
	// lost one from hanging the test.
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _, err := conn.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "hostname\n" {
		t.Fatalf("received %q, %v; want the line nc sent", buf[:n], err)
	}

	want, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	images, _, err := Plan([]string{BusyboxImage}, Sources{Busybox: busybox})
	if err != nil {
		t.Fatal(err)
	}
	var sawBusybox, sawNC bool
	for _, e := range images[0].Entries {
		switch e.Path {
		case "/bin/busybox":
			sawBusybox = bytes.Equal(e.Data, want)
		case "/bin/nc":
			sawNC = e.Type == ociarchive.TypeSymlink && e.Target == "busybox"
		}
	}
	if !sawBusybox || !sawNC {
		t.Errorf("busybox image: /bin/busybox is the built one %v, /bin/nc links to it %v; want both", sawBusybox, sawNC)
	}
}

// needBuilt ends a test whose image source, what, is not built: skipped
// under -short, failed otherwise (make test builds it first).
func needBuilt(t *testing.T, what string, err error) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s is not built (%v)", what, err)
	}
	t.Fatalf("%s is not built (%v): make conformance-sources builds it (make test does)", what, err)
}
