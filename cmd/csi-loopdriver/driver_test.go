package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// testDriver is a driver started in this process on a real socket.
type testDriver struct {
	dir      string // everything of the driver and its mounts is below
	endpoint string
	callLog  string
	stateDir string
}

// startTestDriver starts a driver whose state, socket and call log are in
// a fresh temporary dir; edit adjusts the config before it is validated.
// The driver, and every mount and loop device under that dir, are gone
// when the test ends, failed or not.
func startTestDriver(t *testing.T, edit func(*fileConfig)) *testDriver {
	t.Helper()
	requireRoot(t)
	dir := t.TempDir()
	td := &testDriver{
		dir:      dir,
		endpoint: filepath.Join(dir, "csi.sock"),
		callLog:  filepath.Join(dir, "log", "calls.jsonl"),
		stateDir: filepath.Join(dir, "state"),
	}
	fc := fileConfig{Endpoint: "unix://" + td.endpoint, StateDir: td.stateDir, NodeID: "node-1", CallLog: td.callLog, DefaultVolumeSize: "64Mi"}
	if edit != nil {
		edit(&fc)
	}
	b, err := json.Marshal(fc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(b)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	t.Cleanup(func() { cleanupHost(t, dir, td.stateDir) })
	s, err := start(cfg, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("stopping the driver: %v", err)
		}
	})
	return td
}

// requireRoot marks a test that needs root: skipped under -short (make
// unit); without -short it fails (never skips) when not root: mounts and
// loop devices are what the driver is for.
func requireRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("loop devices, mkfs, mount: not under -short")
	}
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root (loop devices, mkfs, mount); run it as root")
	}
}

// cleanupHost unmounts everything mounted below dir (deepest first) and
// detaches every loop device whose image is below stateDir (none when
// stateDir is empty: the driver's owner cleans those).
func cleanupHost(t *testing.T, dir, stateDir string) {
	t.Helper()
	for _, mp := range mountsBelow(t, dir) {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil {
			t.Errorf("cleanup: unmounting %s: %v", mp, err)
		}
	}
	if !filepath.IsAbs(stateDir) || filepath.Clean(stateDir) == "/" {
		return
	}
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(b)), stateDir+"/") {
			continue
		}
		dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(f)))
		// t.Context() is done by now.
		if err := (losetup{}).detach(context.Background(), dev); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
}

// mountsBelow lists the mount points below dir, deepest first.
func mountsBelow(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mps []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			mps = append(mps, fields[4])
		}
	}
	slices.SortFunc(mps, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return mps
}

// loopOf is the loop device of volume id, "" for none.
func (td *testDriver) loopOf(t *testing.T, id string) string {
	t.Helper()
	dev, err := (losetup{sysBlock: "/sys/block"}).find(filepath.Join(td.stateDir, "volumes", id+".img"))
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// calls reads the driver's call log.
func (td *testDriver) calls(t *testing.T) []callRecord {
	t.Helper()
	f, err := os.Open(td.callLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []callRecord
	dec := json.NewDecoder(f)
	for {
		var r callRecord
		if err := dec.Decode(&r); err == io.EOF {
			return recs
		} else if err != nil {
			t.Fatalf("call log: %v", err)
		}
		recs = append(recs, r)
	}
}

// testWriter sends the driver's log to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestConfigVolumesAreCreatedAtStart checks the config's volumes list: a
// CO without a provisioner (the demo's static PersistentVolume) finds the
// volume under the ID its name makes.
func TestConfigVolumesAreCreatedAtStart(t *testing.T) {
	td := startTestDriver(t, func(fc *fileConfig) { fc.Volumes = []string{"demo-data"} })
	v, err := volumeStore{dir: filepath.Join(td.stateDir, "volumes")}.get(volumeID("demo-data"))
	if err != nil {
		t.Fatalf("volume demo-data after start: %v", err)
	}
	if v.CapacityBytes != 64<<20 {
		t.Errorf("capacity %d; want the default size, 64Mi", v.CapacityBytes)
	}
	if _, err := parseConfig([]byte("endpoint: /x.sock\nstateDir: /s\nnodeID: n\nvolumes: [\"a/b\"]\n")); err == nil || !strings.Contains(err.Error(), "volumes[0]") {
		t.Errorf("a volume name with a slash: %v; want an error naming volumes[0]", err)
	}
}
