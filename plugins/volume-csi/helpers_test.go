package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// testPlugin is volume-csi configured with drivers, called directly through
// its server.
type testPlugin struct {
	*server
	dir string // for staging and target paths
}

// driverSpec is one configured driver of a test: its fake and socket.
type driverSpec struct {
	fake    *fakeDriver
	name    string // configured name; empty means the fake's
	socket  string
	timeout string
}

// startDrivers serves each fake on its own socket.
func startDrivers(t *testing.T, fakes ...*fakeDriver) []driverSpec {
	t.Helper()
	dir := socketDir(t)
	var specs []driverSpec
	for i, f := range fakes {
		s := driverSpec{fake: f, socket: filepath.Join(dir, fmt.Sprintf("d%d.sock", i))}
		f.serve(t, s.socket)
		specs = append(specs, s)
	}
	return specs
}

// newTestPlugin configures a plugin with the given drivers.
func newTestPlugin(t *testing.T, specs ...driverSpec) *testPlugin {
	t.Helper()
	var ds []string
	for _, s := range specs {
		name := s.name
		if name == "" {
			name = s.fake.name
		}
		d := fmt.Sprintf(`{"name":%q,"endpoint":"unix://%s"`, name, s.socket)
		if s.timeout != "" {
			d += fmt.Sprintf(`,"timeout":%q`, s.timeout)
		}
		ds = append(ds, d+"}")
	}
	raw := fmt.Sprintf(`{"drivers":[%s],"stateDir":%q}`, strings.Join(ds, ","), t.TempDir())
	p := newPlugin("test")
	if errs := p.Configure(t.Context(), json.RawMessage(raw)); len(errs) > 0 {
		t.Fatalf("Configure(%s): %v", raw, errs)
	}
	s := p.Volume.(*server)
	t.Cleanup(s.p.close)
	return &testPlugin{server: s, dir: t.TempDir()}
}

// ctx bounds one call of a test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func (tp *testPlugin) stagingPath(name string) string { return filepath.Join(tp.dir, "staging-"+name) }
func (tp *testPlugin) targetPath(name string) string {
	return filepath.Join(tp.dir, "pod-"+name, "mount")
}

func (tp *testPlugin) stageReq(driver, id string) *volumev1.StageRequest {
	return &volumev1.StageRequest{Driver: driver, VolumeId: id, StagingPath: tp.stagingPath(id)}
}

func (tp *testPlugin) publishReq(driver, id string) *volumev1.PublishRequest {
	return &volumev1.PublishRequest{Driver: driver, VolumeId: id, StagingPath: tp.stagingPath(id), TargetPath: tp.targetPath(id)}
}

// stageAndPublish stages and publishes volume id of driver.
func (tp *testPlugin) stageAndPublish(t *testing.T, driver, id string) {
	t.Helper()
	_, err := tp.Stage(ctx(t), tp.stageReq(driver, id))
	wantCode(t, "Stage", err, codes.OK)
	_, err = tp.Publish(ctx(t), tp.publishReq(driver, id))
	wantCode(t, "Publish", err, codes.OK)
}

// wantCode fails unless err has code want.
func wantCode(t *testing.T, call string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: got %v (%v); want %v", call, got, err, want)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// timeUntil is the seconds left until d.
func timeUntil(d time.Time) float64 { return time.Until(d).Seconds() }

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
