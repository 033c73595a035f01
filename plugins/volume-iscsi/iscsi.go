package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/podhost/podhost/plugins/internal/scsi"
	"github.com/podhost/podhost/plugins/internal/scsivolume"
)

// The volume context keys of an iSCSI volume, named as in the Kubernetes
// iSCSI volume source.
const (
	keyPortal        = "targetPortal"
	keyPortals       = "portals" // more portals, comma-separated
	keyIQN           = "iqn"
	keyLUN           = "lun"
	keyIface         = "iscsiInterface"
	keyChapDiscovery = "chapAuthDiscovery" // "true" to use discovery CHAP
	keyChapSession   = "chapAuthSession"   // "true" to use session CHAP
)

// iscsi is the iSCSI transport.
type iscsi struct {
	cfg func() *config
	adm func() scsi.ISCSI
}

func withPort(p string) string {
	if _, _, err := net.SplitHostPort(p); err == nil {
		return p
	}
	return net.JoinHostPort(strings.Trim(p, "[]"), "3260")
}

// targetOf reads the target from a volume context and, for a login
// (withCHAP), the CHAP settings from secrets.
func targetOf(vc, secrets map[string]string, withCHAP bool) (scsi.ISCSITarget, error) {
	bad := func(format string, args ...any) (scsi.ISCSITarget, error) {
		return scsi.ISCSITarget{}, fmt.Errorf("volume_context: "+format+": %w", append(args, scsivolume.ErrInvalid)...)
	}
	t := scsi.ISCSITarget{IQN: vc[keyIQN], LUN: vc[keyLUN], Iface: vc[keyIface]}
	if vc[keyPortal] == "" || t.IQN == "" {
		return bad("%s and %s are required", keyPortal, keyIQN)
	}
	if n, err := strconv.Atoi(t.LUN); err != nil || n < 0 {
		return bad("%s: want a decimal number, got %q", keyLUN, t.LUN)
	}
	if strings.ContainsAny(t.IQN+t.Iface, "/ \t\n") {
		return bad("%s or %s holds a space or slash", keyIQN, keyIface)
	}
	if t.Iface == "" {
		t.Iface = "default"
	}
	for _, p := range append([]string{vc[keyPortal]}, scsivolume.List(vc[keyPortals])...) {
		t.Portals = append(t.Portals, withPort(p))
	}
	for _, c := range []struct {
		key, prefix string
		into        *map[string]string
	}{{keyChapDiscovery, "discovery.sendtargets.auth.", &t.DiscoveryCHAP}, {keyChapSession, "node.session.auth.", &t.SessionCHAP}} {
		if !withCHAP || vc[c.key] != "true" {
			continue
		}
		m := map[string]string{}
		for _, k := range []string{"username", "password", "username_in", "password_in"} {
			if v := secrets[c.prefix+k]; v != "" {
				m[c.prefix+k] = v
			}
		}
		if m[c.prefix+"username"] == "" || m[c.prefix+"password"] == "" {
			return bad("%s is set but the secrets hold no %susername and %spassword", c.key, c.prefix, c.prefix)
		}
		*c.into = m
	}
	return t, nil
}

func (i *iscsi) Attach(ctx context.Context, vc, secrets map[string]string) (scsi.Disk, error) {
	t, err := targetOf(vc, secrets, true)
	if err != nil {
		return scsi.Disk{}, err
	}
	return i.adm().Attach(ctx, t)
}

// Release deletes the LUN's devices, then logs out unless another staged
// volume uses the same target.
func (i *iscsi) Release(ctx context.Context, rec scsivolume.Record, others []scsivolume.Record) error {
	t, err := targetOf(rec.Context, nil, false)
	if err != nil {
		return err
	}
	adm := i.adm()
	if _, err := adm.DeleteDisks(ctx, i.cfg().Multipath, t, rec.Disk); err != nil {
		return err
	}
	if sessionBusy(t, others) {
		return nil
	}
	return adm.Logout(ctx, t)
}

// Detach logs out unless a staged volume uses the target; the host does
// not call it (Stage attaches), but it is served all the same.
func (i *iscsi) Detach(ctx context.Context, vc map[string]string, others []scsivolume.Record) error {
	t, err := targetOf(vc, nil, false)
	if err != nil || sessionBusy(t, others) {
		return err
	}
	return i.adm().Logout(ctx, t)
}

// sessionBusy reports whether another staged volume uses the target (same
// first portal and IQN): then the session stays. A record whose context
// cannot be read counts as busy.
func sessionBusy(t scsi.ISCSITarget, others []scsivolume.Record) bool {
	for _, r := range others {
		o, err := targetOf(r.Context, nil, false)
		if err != nil || o.IQN == t.IQN && o.Portals[0] == t.Portals[0] {
			return true
		}
	}
	return false
}

// LockKey is the IQN: logins, logouts and the session-busy rule of one
// target run one at a time, as the kubelet locks them.
func (i *iscsi) LockKey(vc map[string]string) string { return "iscsi\x00" + vc[keyIQN] }
