package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/podhost/podhost/plugins/internal/scsitest"
	"github.com/podhost/podhost/plugins/internal/scsivolume"
	"github.com/podhost/podhost/sdk/mount"
)

const iqn = "iqn.2026-12.dev.podhost:target"

// step is one Stage or Unstage of a scenario and the iscsiadm calls it
// must make, each written as one space-separated string.
type step struct {
	stage    bool
	volume   string // v0 (LUN 0) or v1 (LUN 1)
	context  map[string]string
	secrets  map[string]string // written as files into a secrets_dir
	rules    []scsitest.Rule
	wantErr  bool
	want     []string
	wantScan string // what host2's scan attribute holds after the step
	// wantDeleted is a LUN whose disk must have been deleted through sysfs.
	wantDeleted string
}

func vc(lun string, extra ...string) map[string]string {
	m := map[string]string{keyPortal: "10.0.0.1", keyIQN: iqn, keyLUN: lun}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

const (
	ifaceShow  = "-m iface -I default -o show"
	discNew    = "-m discoverydb -t sendtargets -p 10.0.0.1:3260 -I default -o new"
	discover   = "-m discoverydb -t sendtargets -p 10.0.0.1:3260 -I default --discover"
	scanManual = "-m node -p 10.0.0.1:3260 -T " + iqn + " -I default -o update -n node.session.scan -v manual"
	login      = "-m node -p 10.0.0.1:3260 -T " + iqn + " -I default --login"
	startup    = "-m node -p 10.0.0.1:3260 -T " + iqn + " -o update -n node.startup -v manual"
	logout     = "-m node -p 10.0.0.1:3260 -T " + iqn + " --logout -I default"
	nodeDelete = "-m node -p 10.0.0.1:3260 -T " + iqn + " -o delete -I default"
	discUpdate = "-m discoverydb -t sendtargets -p 10.0.0.1:3260 -I default -o update -n "
	chapArg    = "-m node -p 10.0.0.1:3260 -T " + iqn + " -I default -o update -n "
)

func TestISCSIScenarios(t *testing.T) {
	chap := map[string]string{"node.session.auth.username": "alice", "node.session.auth.password": "secret"}
	tests := []struct {
		name   string
		target scsitest.Target
		steps  []step
		// loggedIn: the fake keeps the session (a rule made the logout
		// answer "no session" without effect).
		loggedIn bool
	}{
		{name: "single portal: login, then logout of the last user", steps: []step{
			{stage: true, volume: "v0", context: vc("0"), want: []string{ifaceShow, discNew, discover, scanManual, login, startup}, wantScan: "0 0 0"},
			{volume: "v0", want: []string{logout, nodeDelete}},
		}},
		{name: "logged in already: only a scan; session busy: no logout", steps: []step{
			{stage: true, volume: "v0", context: vc("0"), want: []string{ifaceShow, discNew, discover, scanManual, login, startup}},
			{stage: true, volume: "v1", context: vc("1"), want: []string{ifaceShow}, wantScan: "0 0 1"},
			{volume: "v0", want: nil, wantDeleted: "0"},
			{volume: "v1", want: []string{logout, nodeDelete}},
		}},
		{name: "no session and no records are success", steps: []step{
			{stage: true, volume: "v0", context: vc("0"), want: []string{ifaceShow, discNew, discover, scanManual, login, startup}},
			{volume: "v0", rules: []scsitest.Rule{
				{Tool: "iscsiadm", Args: strings.Fields(logout), Exit: 2, Times: 1},
				{Tool: "iscsiadm", Args: strings.Fields(nodeDelete), Exit: 21, Times: 1},
			}, want: []string{logout, nodeDelete}},
		}, loggedIn: true},
		{name: "failed logout is an error and is retried", steps: []step{
			{stage: true, volume: "v0", context: vc("0"), want: []string{ifaceShow, discNew, discover, scanManual, login, startup}},
			{volume: "v0", rules: []scsitest.Rule{{Tool: "iscsiadm", Args: strings.Fields(logout), Exit: 4, Times: 1}}, wantErr: true, want: []string{logout, nodeDelete}},
			{volume: "v0", want: []string{logout, nodeDelete}},
		}},
		{name: "session CHAP from secret files", target: scsitest.Target{CHAP: chap}, steps: []step{
			{stage: true, volume: "v0", context: vc("0", keyChapSession, "true"), secrets: chap, want: []string{
				ifaceShow, discNew, discover, scanManual,
				chapArg + "node.session.auth.authmethod -v CHAP", chapArg + "node.session.auth.username -v alice", chapArg + "node.session.auth.password -v secret",
				login, startup}},
			{volume: "v0", want: []string{logout, nodeDelete}},
		}},
		{name: "discovery CHAP before the discovery", steps: []step{
			{stage: true, volume: "v0", context: vc("0", keyChapDiscovery, "true"), secrets: map[string]string{
				"discovery.sendtargets.auth.username": "bob", "discovery.sendtargets.auth.password": "pw", "discovery.sendtargets.auth.password_in": "pw2",
			}, want: []string{
				ifaceShow, discNew,
				discUpdate + "discovery.sendtargets.auth.authmethod -v CHAP", discUpdate + "discovery.sendtargets.auth.username -v bob",
				discUpdate + "discovery.sendtargets.auth.password -v pw", discUpdate + "discovery.sendtargets.auth.password_in -v pw2",
				discover, scanManual, login, startup}},
			{volume: "v0", want: []string{logout, nodeDelete}},
		}},
		{name: "CHAP asked for without secrets", steps: []step{
			{stage: true, volume: "v0", context: vc("0", keyChapSession, "true"), wantErr: true},
		}},
		{name: "login refused: the node record is deleted", target: scsitest.Target{CHAP: chap}, steps: []step{
			{stage: true, volume: "v0", context: vc("0"), wantErr: true, want: []string{
				ifaceShow, discNew, discover, scanManual, login, "-m node -p 10.0.0.1:3260 -I default -T " + iqn + " -o delete"}},
			{volume: "v0", want: nil},
		}},
		{name: "session exists on login: the node record is kept", steps: []step{
			{stage: true, volume: "v0", context: vc("0"), rules: []scsitest.Rule{{Tool: "iscsiadm", Args: strings.Fields(login), Exit: 15, Times: 1}},
				wantErr: true, want: []string{ifaceShow, discNew, discover, scanManual, login, startup}},
		}},
		{name: "discovery fails", target: scsitest.Target{Portal: "10.0.0.9:3260"}, steps: []step{
			{stage: true, volume: "v0", context: vc("0"), wantErr: true, want: []string{
				ifaceShow, discNew, discover, "-m discoverydb -t sendtargets -p 10.0.0.1:3260 -I default -o delete"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scsitest.NeedRoot(t)
			f := scsitest.New(t)
			target := tt.target
			if target.Portal == "" {
				target.Portal = portal
			}
			target.IQN = iqn
			target.LUNs = map[string]string{"0": scsitest.Loop(t, 16<<20), "1": scsitest.Loop(t, 16<<20)}
			f.AddTarget(target)
			s, _ := iscsiServer(t, f)
			dir := t.TempDir()
			t.Cleanup(func() {
				for _, v := range []string{"v0", "v1"} {
					_ = mount.Unmount(filepath.Join(dir, v))
				}
			})
			seen := 0
			for i, st := range tt.steps {
				for _, r := range st.rules {
					f.AddRule(r)
				}
				staging := filepath.Join(dir, st.volume)
				var err error
				if st.stage {
					args := scsivolume.StageArgs{ID: st.volume, StagingPath: staging, Context: st.context}
					if st.secrets != nil {
						args.SecretsDir = filepath.Join(dir, "secrets")
						writeSecrets(t, args.SecretsDir, st.secrets)
					}
					err = s.Volumes.Stage(context.Background(), args)
				} else {
					err = s.Volumes.Unstage(context.Background(), st.volume, staging)
				}
				if (err != nil) != st.wantErr {
					t.Fatalf("step %d: got error %v; want error %v", i, err, st.wantErr)
				}
				calls := f.Calls("iscsiadm")
				var got []string
				for _, c := range calls[seen:] {
					got = append(got, strings.Join(c, " "))
				}
				seen = len(calls)
				if !reflect.DeepEqual(got, st.want) {
					t.Errorf("step %d iscsiadm calls:\n got %q\nwant %q", i, got, st.want)
				}
				if st.wantDeleted != "" {
					link, err := os.Readlink(filepath.Join(f.Tree.Dev, "disk", "by-path", scsitest.ISCSILink(portal, iqn, st.wantDeleted)))
					if err != nil || !f.Deleted(filepath.Base(link)) {
						t.Errorf("step %d: the disk of LUN %s (%s, %v) not deleted", i, st.wantDeleted, link, err)
					}
				}
				if st.wantScan != "" && f.Scanned(2) != st.wantScan {
					t.Errorf("step %d: host2 scan %q; want %q", i, f.Scanned(2), st.wantScan)
				}
			}
			if f.LoggedIn(portal, iqn) != tt.loggedIn {
				t.Errorf("logged in after the last Unstage: %v; want %v", !tt.loggedIn, tt.loggedIn)
			}
			if m := f.Misuses(); len(m) > 0 {
				t.Errorf("fake tools used on mounted devices: %q", m)
			}
		})
	}
}

// TestFakeNotesLogoutWhileMounted: the fake iscsiadm notes a logout made
// while the LUN is still mounted, which the order checks of the tests
// rely on.
func TestFakeNotesLogoutWhileMounted(t *testing.T) {
	scsitest.NeedRoot(t)
	f := scsitest.New(t)
	f.AddTarget(scsitest.Target{Portal: portal, IQN: iqn, LUNs: map[string]string{"0": scsitest.Loop(t, 16<<20)}})
	s, _ := iscsiServer(t, f)
	staging := filepath.Join(t.TempDir(), "staging")
	t.Cleanup(func() { _ = mount.Unmount(staging) })
	if err := s.Volumes.Stage(context.Background(), scsivolume.StageArgs{ID: "v", StagingPath: staging, Context: vc("0")}); err != nil {
		t.Fatalf("Stage: %v", err)
	}
	if m := f.Misuses(); len(m) > 0 {
		t.Fatalf("misuses before the logout: %q", m)
	}
	if out, err := exec.CommandContext(t.Context(), f.Command("iscsiadm"), strings.Fields(logout)...).CombinedOutput(); err != nil {
		t.Fatalf("iscsiadm %s: %v: %s", logout, err, out)
	}
	if m := f.Misuses(); len(m) != 1 || !strings.Contains(m[0], "--logout") || !strings.Contains(m[0], staging) {
		t.Errorf("misuses after a logout under the mount: %q; want one naming the logout and %s", m, staging)
	}
}

func writeSecrets(t *testing.T, dir string, secrets map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range secrets {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
