package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestReapStale(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("sleep is needed: %v", err)
	}
	for _, tc := range []struct {
		name     string
		path     string // the plugin's configured executable
		wantKill bool
	}{
		{"same executable is killed", sleep, true},
		{"another executable is left alone", os.Args[0], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(sleep, "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
			if err := recordPID(dir, "rt", cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}

			killed := reapStale(dir, "rt", tc.path, hclog.NewNullLogger())
			if (killed == cmd.Process.Pid) != tc.wantKill {
				t.Fatalf("reapStale killed pid %d; want kill %v of %d", killed, tc.wantKill, cmd.Process.Pid)
			}
			if tc.wantKill {
				if err := <-exited; err == nil {
					t.Errorf("process exited cleanly; want killed")
				}
				exited <- nil
			}
			if _, err := os.Stat(filepath.Join(dir, "rt.pid")); !os.IsNotExist(err) {
				t.Errorf("pid file left behind: %v", err)
			}
		})
	}
}

func TestReapStaleWithoutRecord(t *testing.T) {
	if pid := reapStale(t.TempDir(), "rt", "/bin/true", hclog.NewNullLogger()); pid != 0 {
		t.Errorf("reapStale without a pid file killed %d", pid)
	}
}
