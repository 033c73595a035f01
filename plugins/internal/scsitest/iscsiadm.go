package scsitest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/podhost/podhost/plugins/internal/scsi"
)

func treeAt(root string) scsi.Tree {
	return scsi.Tree{Sys: filepath.Join(root, "sys"), Dev: filepath.Join(root, "dev")}
}

// Target is an iSCSI target the fake iscsiadm can log in to.
type Target struct {
	Portal string            `json:"portal"` // ip:port
	IQN    string            `json:"iqn"`
	LUNs   map[string]string `json:"luns"` // LUN -> backing device (a loop device)
	// CHAP, when set, is the node.session.auth.* keys a login needs.
	CHAP map[string]string `json:"chap,omitempty"`
	// Multipath, when set, is the dm-N device the fake builds over the
	// LUN's disks of every portal of the IQN (what multipathd does).
	Multipath string `json:"multipath,omitempty"`
}

// iscsiState is the fake's state: targets, sessions, node settings.
type iscsiState struct {
	Targets  []Target                     `json:"targets"`
	Sessions map[string]*fakeSession      `json:"sessions"` // portal|iqn
	Settings map[string]map[string]string `json:"settings"` // portal|iqn -> key -> value
	Next     int                          `json:"next"`     // next host/session number
	Disks    int                          `json:"disks"`    // disks made so far
}

type fakeSession struct {
	Host  int               `json:"host"`
	Disks map[string]string `json:"disks"` // LUN -> sdX
}

func (f *Fake) stateFile() string { return filepath.Join(f.Bin, "iscsi.json") }

func (f *Fake) loadState() iscsiState {
	st := iscsiState{Sessions: map[string]*fakeSession{}, Settings: map[string]map[string]string{}, Next: 2}
	if b, err := os.ReadFile(f.stateFile()); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	return st
}

func (f *Fake) saveState(st iscsiState) {
	b, _ := json.Marshal(st)
	_ = os.WriteFile(f.stateFile(), b, 0o644)
}

// AddTarget declares a target.
func (f *Fake) AddTarget(t Target) {
	st := f.loadState()
	st.Targets = append(st.Targets, t)
	f.saveState(st)
}

// ISCSILink is the by-path name of an iSCSI LUN.
func ISCSILink(portal, iqn, lun string) string {
	return "ip-" + portal + "-iscsi-" + iqn + "-lun-" + lun
}

// LoggedIn reports whether the fake has a session to iqn at portal.
func (f *Fake) LoggedIn(portal, iqn string) bool {
	return f.loadState().Sessions[portal+"|"+iqn] != nil
}

// arg returns the value after flag in args.
func arg(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

func has(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}

// iscsiadm emulates the modes the plugin uses. Exit codes: 2 no session,
// 8 timeout (unknown portal), 21 no records, 24 login auth failure.
func iscsiadm(f *Fake, args []string) (int, string) {
	st := f.loadState()
	defer f.saveState(st)
	portal, iqn := arg(args, "-p"), arg(args, "-T")
	switch mode := arg(args, "-m"); {
	case mode == "iface" && arg(args, "-o") == "show":
		return 0, fmt.Sprintf("iface.iscsi_ifacename = %s\niface.transport_name = tcp\niface.initiatorname = <empty>\n", arg(args, "-I"))
	case mode == "discoverydb" && has(args, "--discover"):
		for _, t := range st.Targets {
			if t.Portal == portal {
				return 0, fmt.Sprintf("%s,1 %s\n", portal, t.IQN)
			}
		}
		return 8, "iscsiadm: connection login retries (reopen_max) 5 exceeded\n"
	case mode == "discoverydb":
		return 0, ""
	case mode == "node" && has(args, "--login"):
		return f.login(&st, portal, iqn)
	case mode == "node" && has(args, "--logout"):
		s := st.Sessions[portal+"|"+iqn]
		if s == nil {
			return 21, "iscsiadm: No matching sessions found\n"
		}
		if t := target(st, portal, iqn); t != nil {
			for _, lun := range slices.Sorted(maps.Keys(s.Disks)) {
				if at := mountedAt(t.LUNs[lun]); len(at) > 0 {
					f.noteMisuse("iscsiadm --logout of %s at %s while lun %s is mounted at %s", iqn, portal, lun, strings.Join(at, ","))
				}
			}
		}
		f.removeSession(st, portal, iqn, s)
		delete(st.Sessions, portal+"|"+iqn)
		return 0, ""
	case mode == "node" && arg(args, "-o") == "update":
		if target(st, portal, iqn) == nil {
			return 21, "iscsiadm: No records found\n"
		}
		key := portal + "|" + iqn
		if st.Settings[key] == nil {
			st.Settings[key] = map[string]string{}
		}
		st.Settings[key][arg(args, "-n")] = arg(args, "-v")
		return 0, ""
	case mode == "node" && arg(args, "-o") == "delete":
		if target(st, portal, iqn) == nil || st.Settings[portal+"|"+iqn] == nil {
			return 21, "iscsiadm: No records found\n"
		}
		delete(st.Settings, portal+"|"+iqn)
		return 0, ""
	}
	return 1, fmt.Sprintf("fake iscsiadm: unsupported arguments %q\n", args)
}

func target(st iscsiState, portal, iqn string) *Target {
	for i, t := range st.Targets {
		if t.Portal == portal && t.IQN == iqn {
			return &st.Targets[i]
		}
	}
	return nil
}

// login builds the session, connection and LUN tree of section 4.3, the
// disks and their by-path links.
func (f *Fake) login(st *iscsiState, portal, iqn string) (int, string) {
	t := target(*st, portal, iqn)
	if t == nil {
		return 8, "iscsiadm: connection timed out\n"
	}
	key := portal + "|" + iqn
	if st.Sessions[key] != nil {
		return 15, "iscsiadm: session exists\n"
	}
	for k, v := range t.CHAP {
		if st.Settings[key][k] != v || st.Settings[key]["node.session.auth.authmethod"] != "CHAP" {
			return 24, "iscsiadm: Login failed to authorize\n"
		}
	}
	n := st.Next
	st.Next++
	s := &fakeSession{Host: n, Disks: map[string]string{}}
	sess := filepath.Join(f.Tree.Sys, "class", "iscsi_host", fmt.Sprintf("host%d", n), "device", fmt.Sprintf("session%d", n))
	write := func(path, content string) {
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		_ = os.WriteFile(path, []byte(content), 0o644)
	}
	write(filepath.Join(sess, "iscsi_session", fmt.Sprintf("session%d", n), "targetname"), iqn+"\n")
	host, port, _ := net.SplitHostPort(portal)
	conn := filepath.Join(sess, fmt.Sprintf("connection%d:0", n), "iscsi_connection", fmt.Sprintf("connection%d:0", n))
	for attr, v := range map[string]string{"address": host, "port": port, "persistent_address": host, "persistent_port": port} {
		write(filepath.Join(conn, attr), v+"\n")
	}
	write(filepath.Join(f.Tree.Sys, "class", "scsi_host", fmt.Sprintf("host%d", n), "scan"), "")
	for lun, backing := range t.LUNs {
		st.Disks++
		disk := fmt.Sprintf("sd%c", 'a'+st.Disks%26) + strings.Repeat("a", st.Disks/26)
		s.Disks[lun] = disk
		_ = os.MkdirAll(filepath.Join(sess, fmt.Sprintf("target%d:0:0", n), fmt.Sprintf("%d:0:0:%s", n, lun), "block", disk), 0o755)
		addDisk(f.Tree, disk, backing)
		_ = os.Symlink("../../"+disk, filepath.Join(f.Tree.Dev, "disk", "by-path", ISCSILink(portal, iqn, lun)))
		if t.Multipath != "" {
			_ = os.MkdirAll(filepath.Join(f.Tree.Sys, "block", t.Multipath, "slaves"), 0o755)
			_ = os.WriteFile(filepath.Join(f.Tree.Sys, "block", t.Multipath, "slaves", disk), nil, 0o644)
			_ = os.Symlink(backing, f.Tree.DevPath(t.Multipath))
		}
	}
	st.Sessions[key] = s
	return 0, ""
}

// removeSession undoes login: the kernel drops the session's disks.
func (f *Fake) removeSession(st iscsiState, portal, iqn string, s *fakeSession) {
	_ = os.RemoveAll(filepath.Join(f.Tree.Sys, "class", "iscsi_host", fmt.Sprintf("host%d", s.Host)))
	_ = os.RemoveAll(filepath.Join(f.Tree.Sys, "class", "scsi_host", fmt.Sprintf("host%d", s.Host)))
	for lun, disk := range s.Disks {
		_ = os.RemoveAll(filepath.Join(f.Tree.Sys, "block", disk))
		_ = os.Remove(f.Tree.DevPath(disk))
		_ = os.Remove(filepath.Join(f.Tree.Dev, "disk", "by-path", ISCSILink(portal, iqn, lun)))
		if t := target(st, portal, iqn); t != nil && t.Multipath != "" {
			_ = os.Remove(filepath.Join(f.Tree.Sys, "block", t.Multipath, "slaves", disk))
		}
	}
}
