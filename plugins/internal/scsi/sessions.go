package scsi

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PortalHosts maps each portal (ip:port) with an iSCSI session to target
// iqn to the number of its SCSI host, from
// /sys/class/iscsi_host/host<N>/device/session<S>: both the current and
// the persistent address count. A session whose target name cannot be
// read is skipped; no iscsi_host directory means no sessions.
func (t Tree) PortalHosts(iqn string) map[string]int {
	hosts := map[string]int{}
	for _, s := range t.sessions() {
		if s.err != nil || s.target != iqn {
			continue
		}
		for _, p := range s.portals {
			hosts[p] = s.host
		}
	}
	return hosts
}

// LUNDisks returns the SCSI disks of LUN lun of every session to target
// iqn. A session whose target name cannot be read is an error here.
func (t Tree) LUNDisks(iqn, lun string) ([]string, error) {
	var disks []string
	for _, s := range t.sessions() {
		if s.err != nil {
			return nil, s.err
		}
		if s.target != iqn {
			continue
		}
		found, _ := filepath.Glob(filepath.Join(s.dir, fmt.Sprintf("target%d:0:0", s.host), fmt.Sprintf("%d:0:0:%s", s.host, lun), "block", "*"))
		for _, f := range found {
			disks = append(disks, filepath.Base(f))
		}
	}
	return sortedUnique(disks), nil
}

type session struct {
	host    int
	dir     string
	target  string
	portals []string
	err     error
}

func (t Tree) sessions() []session {
	var out []session
	hosts, _ := os.ReadDir(filepath.Join(t.Sys, "class", "iscsi_host"))
	for _, h := range hosts {
		n, ok := numbered(h.Name(), "host")
		if !ok {
			continue
		}
		dev := filepath.Join(t.Sys, "class", "iscsi_host", h.Name(), "device")
		entries, _ := os.ReadDir(dev)
		for _, e := range entries {
			if _, ok := numbered(e.Name(), "session"); !ok {
				continue
			}
			s := session{host: n, dir: filepath.Join(dev, e.Name())}
			b, err := os.ReadFile(filepath.Join(s.dir, "iscsi_session", e.Name(), "targetname"))
			if err != nil {
				s.err = fmt.Errorf("reading the target of iscsi %s: %w", e.Name(), err)
			}
			s.target = strings.TrimSpace(string(b))
			s.portals = connections(s.dir)
			out = append(out, s)
		}
	}
	return out
}

// connections returns the portals of a session's connections.
func connections(dir string) []string {
	var portals []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "connection") {
			continue
		}
		attrs := filepath.Join(dir, e.Name(), "iscsi_connection", e.Name())
		for _, pair := range [][2]string{{"address", "port"}, {"persistent_address", "persistent_port"}} {
			addr, err1 := os.ReadFile(filepath.Join(attrs, pair[0]))
			port, err2 := os.ReadFile(filepath.Join(attrs, pair[1]))
			if err1 != nil || err2 != nil {
				continue
			}
			portals = append(portals, net.JoinHostPort(strings.TrimSpace(string(addr)), strings.TrimSpace(string(port))))
		}
	}
	return portals
}

// numbered parses names like host3 and session12.
func numbered(name, prefix string) (int, bool) {
	if !strings.HasPrefix(name, prefix) {
		return 0, false
	}
	n, err := strconv.Atoi(name[len(prefix):])
	return n, err == nil
}
