package scsi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestRetry(t *testing.T) {
	tests := []struct {
		name      string
		budget    time.Duration
		failures  int
		wantErr   bool
		wantCalls int
	}{
		{name: "first call succeeds", budget: time.Minute, wantCalls: 1},
		{name: "succeeds on the third call", budget: time.Minute, failures: 2, wantCalls: 3},
		{name: "a minute allows seven calls", budget: time.Minute, failures: 99, wantErr: true, wantCalls: 7},
		{name: "no budget, one call", budget: 0, failures: 99, wantErr: true, wantCalls: 1},
		{name: "budget shorter than the interval", budget: 5 * time.Second, failures: 99, wantErr: true, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, waited := 0, time.Duration(0)
			wait := func(d time.Duration) <-chan time.Time {
				waited += d
				ch := make(chan time.Time, 1)
				ch <- time.Time{}
				return ch
			}
			err := Retry(context.Background(), 10*time.Second, tt.budget, wait, func() error {
				calls++
				if calls <= tt.failures {
					return errors.New("map in use")
				}
				return nil
			})
			if (err != nil) != tt.wantErr || calls != tt.wantCalls {
				t.Errorf("Retry: got %v after %d calls; want error %v after %d", err, calls, tt.wantErr, tt.wantCalls)
			}
			if waited > tt.budget {
				t.Errorf("waited %v; want at most the budget %v", waited, tt.budget)
			}
		})
	}
}

func TestRetryStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	never := func(time.Duration) <-chan time.Time { return nil }
	err := Retry(ctx, time.Second, time.Minute, never, func() error { return errors.New("busy") })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Retry with an ended context: got %v; want context.Canceled", err)
	}
}

// TestSessions reads the iSCSI sysfs layout of section 4.3.
func TestSessions(t *testing.T) {
	sys := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(sys, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sess := "class/iscsi_host/host3/device/session1/"
	write(sess+"iscsi_session/session1/targetname", "iqn.a\n")
	conn := sess + "connection1:0/iscsi_connection/connection1:0/"
	write(conn+"address", "10.0.0.1\n")
	write(conn+"port", "3260\n")
	write(conn+"persistent_address", "192.168.0.1\n")
	write(conn+"persistent_port", "3261\n")
	write(sess+"target3:0:0/3:0:0:2/block/sdc/dev", "")
	write(sess+"target3:0:0/3:0:0:1/block/sdb/dev", "")
	tree := Tree{Sys: sys, Dev: t.TempDir()}

	hosts := tree.PortalHosts("iqn.a")
	if want := map[string]int{"10.0.0.1:3260": 3, "192.168.0.1:3261": 3}; len(hosts) != 2 || hosts["10.0.0.1:3260"] != 3 || hosts["192.168.0.1:3261"] != 3 {
		t.Errorf("PortalHosts: got %v; want %v", hosts, want)
	}
	if got := tree.PortalHosts("iqn.other"); len(got) != 0 {
		t.Errorf("PortalHosts of another target: got %v; want none", got)
	}
	if got, err := tree.LUNDisks("iqn.a", "2"); err != nil || !slices.Equal(got, []string{"sdc"}) {
		t.Errorf("LUNDisks lun 2: got %v, %v; want [sdc]", got, err)
	}
	// A session whose target name cannot be read: skipped for attach, an
	// error for deletion.
	if err := os.MkdirAll(filepath.Join(sys, "class/iscsi_host/host4/device/session2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := tree.PortalHosts("iqn.a"); len(got) != 2 {
		t.Errorf("PortalHosts with an unreadable session: got %v; want the readable one", got)
	}
	if _, err := tree.LUNDisks("iqn.a", "2"); err == nil {
		t.Errorf("LUNDisks with an unreadable session: got no error")
	}
	if got := (Tree{Sys: t.TempDir()}).PortalHosts("iqn.a"); len(got) != 0 {
		t.Errorf("PortalHosts without iscsi_host: got %v; want none", got)
	}
}

// TestSize reads a regular file's size without root; block devices are
// covered by the plugins' tests on loop devices.
func TestSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 64<<20); err != nil {
		t.Fatal(err)
	}
	if got, err := Size(p); err != nil || got != 64<<20 {
		t.Errorf("Size: got %d, %v; want %d", got, err, 64<<20)
	}
	if _, err := Size(t.TempDir()); err == nil {
		t.Errorf("Size of a directory: got no error")
	}
	if _, err := Size(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Errorf("Size of a missing path: got no error")
	}
}
