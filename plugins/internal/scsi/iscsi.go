package scsi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The iscsiadm exit codes the plugin acts on.
const (
	exitSessionNotFound = 2
	exitSessionExists   = 15
	exitNoRecords       = 21
	exitAuthFailed      = 24
)

// ISCSITarget is one iSCSI LUN and how to log in to it.
type ISCSITarget struct {
	Portals []string // ip:port, the first the target portal
	IQN     string
	LUN     string
	Iface   string // "default" unless the volume names one
	// DiscoveryCHAP and SessionCHAP map iscsiadm keys
	// (discovery.sendtargets.auth.username, node.session.auth.password, …)
	// to secrets; nil means no CHAP.
	DiscoveryCHAP, SessionCHAP map[string]string
}

// ISCSI runs iscsiadm the way the kubelet's iSCSI volume plugin does,
// against the node's sysfs and /dev.
type ISCSI struct {
	Tree     Tree
	Run      Runner
	Iscsiadm string
	// Wait sleeps between polls of the device links; time.After in
	// production.
	Wait func(time.Duration) <-chan time.Time
}

const (
	attachAttempts = 5
	linkWait       = 30 // one-second polls for a by-path link
	multipathWait  = 10 // one-second polls for a multipath device
)

func (a ISCSI) adm(ctx context.Context, args ...string) ([]byte, error) {
	return a.Run.Run(ctx, a.Iscsiadm, args...)
}

// transport reads the iface's transport name.
func (a ISCSI) transport(ctx context.Context, iface string) (string, error) {
	out, err := a.adm(ctx, "-m", "iface", "-I", iface, "-o", "show")
	if err != nil {
		return "", fmt.Errorf("iscsi: reading iface %s: %w", iface, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "iface.transport_name" && f[1] == "=" {
			if f[2] == "<empty>" {
				return "tcp", nil
			}
			return f[2], nil
		}
	}
	return "", fmt.Errorf("iscsi: could not parse iface file for %s", iface)
}

// Attach logs in to every portal not logged in yet, scans the LUN and
// waits for its disks; with several portals it waits for their multipath
// device.
func (a ISCSI) Attach(ctx context.Context, t ISCSITarget) (Disk, error) {
	transport, err := a.transport(ctx, t.Iface)
	if err != nil {
		return Disk{}, err
	}
	found := map[string]string{} // portal -> disk
	var lastErr error
	for attempt := 1; attempt <= attachAttempts; attempt++ {
		hosts := a.Tree.PortalHosts(t.IQN)
		for _, portal := range t.Portals {
			if found[portal] != "" {
				continue
			}
			host, ok := hosts[portal]
			if !ok {
				if err := a.login(ctx, t, portal); err != nil {
					lastErr = err
					continue
				}
				hosts = a.Tree.PortalHosts(t.IQN)
				if host, ok = hosts[portal]; !ok {
					lastErr = fmt.Errorf("iscsi: no session to %s at %s after login", t.IQN, portal)
					continue
				}
			}
			if err := a.Tree.ScanLUN(host, t.LUN); err != nil {
				lastErr = err
				continue
			}
			disk, err := a.waitLink(ctx, transport, portal, t)
			if err != nil {
				lastErr = err
				continue
			}
			found[portal] = disk
		}
		if len(found) == 0 {
			return Disk{}, errors.Join(fmt.Errorf("iscsi: failed to get any path for %s lun %s: %w", t.IQN, t.LUN, ErrNoDisk), lastErr)
		}
		if len(found) == len(t.Portals) || len(found) >= 2 && attempt >= 2 {
			break
		}
	}
	var paths []string
	for _, p := range t.Portals {
		if d := found[p]; d != "" {
			paths = append(paths, d)
		}
	}
	return a.multipath(ctx, paths, len(t.Portals) > 1), nil
}

// login discovers the target at portal and logs in to it.
func (a ISCSI) login(ctx context.Context, t ISCSITarget, portal string) error {
	disc := []string{"-m", "discoverydb", "-t", "sendtargets", "-p", portal, "-I", t.Iface}
	_, _ = a.adm(ctx, append(disc, "-o", "new")...) // exists already is fine
	if t.DiscoveryCHAP != nil {
		if err := a.chap(ctx, disc, "discovery.sendtargets.auth", t.DiscoveryCHAP); err != nil {
			return err
		}
	}
	if _, err := a.adm(ctx, append(disc, "--discover")...); err != nil {
		_, _ = a.adm(ctx, append(disc, "-o", "delete")...)
		return fmt.Errorf("iscsi: discovery at %s: %w", portal, err)
	}
	node := []string{"-m", "node", "-p", portal, "-T", t.IQN, "-I", t.Iface}
	_, _ = a.adm(ctx, append(node, "-o", "update", "-n", "node.session.scan", "-v", "manual")...) // a warning upstream
	if t.SessionCHAP != nil {
		if err := a.chap(ctx, node, "node.session.auth", t.SessionCHAP); err != nil {
			return err
		}
	}
	if _, err := a.adm(ctx, append(node, "--login")...); err != nil && ExitCode(err) != exitSessionExists {
		_, _ = a.adm(ctx, "-m", "node", "-p", portal, "-I", t.Iface, "-T", t.IQN, "-o", "delete")
		if ExitCode(err) == exitAuthFailed {
			err = fmt.Errorf("%w: %w", ErrAuth, err)
		}
		return fmt.Errorf("iscsi: login to %s at %s: %w", t.IQN, portal, err)
	}
	_, _ = a.adm(ctx, "-m", "node", "-p", portal, "-T", t.IQN, "-o", "update", "-n", "node.startup", "-v", "manual")
	return nil
}

// chap sets the authmethod and the CHAP keys present, in a fixed order.
func (a ISCSI) chap(ctx context.Context, base []string, prefix string, secrets map[string]string) error {
	set := func(key, value string) error {
		if _, err := a.adm(ctx, append(base, "-o", "update", "-n", key, "-v", value)...); err != nil {
			return fmt.Errorf("iscsi: setting %s: exit code %d", key, ExitCode(err)) // never the secret
		}
		return nil
	}
	if err := set(prefix+".authmethod", "CHAP"); err != nil {
		return err
	}
	for _, k := range []string{"username", "password", "username_in", "password_in"} {
		if v, ok := secrets[prefix+"."+k]; ok && v != "" {
			if err := set(prefix+"."+k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitLink waits for the LUN's by-path link at portal and returns its disk.
func (a ISCSI) waitLink(ctx context.Context, transport, portal string, t ISCSITarget) (string, error) {
	name := "ip-" + portal + "-iscsi-" + t.IQN + "-lun-" + t.LUN
	pattern := filepath.Join(a.Tree.Dev, "disk", "by-path", name)
	if transport != "tcp" {
		pattern = filepath.Join(a.Tree.Dev, "disk", "by-path", "pci-*-"+name)
	}
	for i := 0; ; i++ {
		links, _ := filepath.Glob(pattern)
		for _, l := range links {
			if disk, ok := a.Tree.resolve(l); ok {
				if _, err := os.Stat(a.Tree.DevPath(disk)); err == nil {
					return disk, nil
				}
			}
		}
		if i >= linkWait {
			return "", fmt.Errorf("iscsi: no device link %s: %w", name, ErrNoDisk)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-a.Wait(time.Second):
		}
	}
}

// multipath returns the multipath device over paths, waiting for it when
// there are several portals, else the first path.
func (a ISCSI) multipath(ctx context.Context, paths []string, wait bool) Disk {
	for i := 0; ; i++ {
		for _, p := range paths {
			if dm := a.Tree.Holder(p); dm != "" {
				return Disk{Name: dm, Paths: sortedUnique(append(paths, a.Tree.Slaves(dm)...))}
			}
		}
		if !wait || i >= multipathWait {
			return Disk{Name: paths[0], Paths: paths}
		}
		select {
		case <-ctx.Done():
			return Disk{Name: paths[0], Paths: paths}
		case <-a.Wait(time.Second):
		}
	}
}

// DeleteDisks flushes the multipath devices over the LUN's disks (a
// failed flush is only reported) and deletes the disks: those sysfs shows
// for the LUN and the recorded ones.
func (a ISCSI) DeleteDisks(ctx context.Context, multipath string, t ISCSITarget, recorded Disk) (warnings, err error) {
	disks, err := a.Tree.LUNDisks(t.IQN, t.LUN)
	if err != nil {
		return nil, err
	}
	disks = sortedUnique(append(disks, recorded.Paths...))
	var warns, errs []error
	flushed := map[string]bool{}
	for _, d := range append([]string{recorded.Name}, disks...) {
		dm := d
		if !IsMultipath(d) {
			dm = a.Tree.Holder(d)
		}
		if dm == "" || flushed[dm] || !a.Tree.Exists(dm) {
			continue
		}
		flushed[dm] = true
		if _, err := a.Run.Run(ctx, multipath, "-f", a.Tree.DevPath(dm)); err != nil {
			warns = append(warns, fmt.Errorf("flushing %s: %w", dm, err))
		}
	}
	for _, d := range disks {
		if !IsMultipath(d) {
			errs = append(errs, a.Tree.Delete(d))
		}
	}
	return errors.Join(warns...), errors.Join(errs...)
}

// Logout logs out of the target at every portal and deletes its node
// records; no session (2) and no records (21) are success.
func (a ISCSI) Logout(ctx context.Context, t ISCSITarget) error {
	var errs []error
	for _, portal := range t.Portals {
		for _, op := range [][]string{{"--logout"}, {"-o", "delete"}} {
			args := append(append([]string{"-m", "node", "-p", portal, "-T", t.IQN}, op...), "-I", t.Iface)
			if _, err := a.adm(ctx, args...); err != nil {
				if c := ExitCode(err); c != exitNoRecords && c != exitSessionNotFound {
					errs = append(errs, fmt.Errorf("iscsi: %s %s at %s: %w", op[len(op)-1], t.IQN, portal, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}
