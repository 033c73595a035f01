package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

// TestEphemeralInline: a publish whose context says ephemeral is served
// without staging by a driver that stages; the volume is made for it,
// sized by the context, mounted with a real filesystem, and deleted with
// its loop device when the target is unpublished. A bad size or a staging
// path is refused naming the field.
func TestEphemeralInline(t *testing.T) {
	td := startTestDriver(t, nil)
	c := dial(t, td.endpoint)
	ctx := t.Context()
	target := filepath.Join(td.dir, "inline-target")
	handle := "csi-0123abcd"
	volCtx := map[string]string{ephemeralKey: "true", ephemeralSizeKey: "32Mi"}
	publish := func(staging string, vc map[string]string) error {
		_, err := c.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{
			VolumeId: handle, StagingTargetPath: staging, TargetPath: target, VolumeCapability: rwo, VolumeContext: vc,
		})
		return err
	}
	wantCode(t, "publish with a staging path", publish(filepath.Join(td.dir, "st"), volCtx), codes.InvalidArgument)
	wantCode(t, "publish with a bad size", publish("", map[string]string{ephemeralKey: "true", ephemeralSizeKey: "lots"}), codes.InvalidArgument)
	wantCode(t, "publish of a handle that is no volume", publish("", nil), codes.NotFound)

	wantCode(t, "publish", publish("", volCtx), codes.OK)
	wantCode(t, "publish again", publish("", volCtx), codes.OK)
	writeFile(t, filepath.Join(target, "f"), "x")
	stats, err := c.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: handle, VolumePath: target})
	wantCode(t, "stats", err, codes.OK)
	if total := stats.GetUsage()[0].GetTotal(); total <= 16<<20 || total > 32<<20 {
		t.Errorf("stats of a 32 MiB inline volume: total %d", total)
	}
	id := ephemeralID(handle)
	if dev := td.loopOf(t, id); dev == "" {
		t.Fatal("no loop device for the published inline volume")
	}
	wantCode(t, "unpublish", c.unpublish(ctx, handle, target), codes.OK)
	if mounted := mountsBelow(t, td.dir); len(mounted) != 0 {
		t.Errorf("mounts after unpublish: %v", mounted)
	}
	if dev := td.loopOf(t, id); dev != "" {
		t.Errorf("loop device after unpublish: %s", dev)
	}
	for _, p := range []string{target, filepath.Join(td.stateDir, "volumes", id+".img"), filepath.Join(td.stateDir, "volumes", id+".json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s after unpublish: %v", p, err)
		}
	}
	wantCode(t, "unpublish again", c.unpublish(ctx, handle, target), codes.OK)
}

// TestCallLogSecretKeys: the call log names the keys of a publish's
// secrets, sorted, and never holds a value; a publish whose context asks
// for a secret key it was not given is denied.
func TestCallLogSecretKeys(t *testing.T) {
	td := startTestDriver(t, nil)
	c := dial(t, td.endpoint)
	_, err := c.NodePublishVolume(t.Context(), &csi.NodePublishVolumeRequest{
		VolumeId: "no-such-volume", TargetPath: filepath.Join(td.dir, "t"), VolumeCapability: rwo,
		Secrets: map[string]string{"user": "value-of-user", "password": "value-of-password"},
	})
	wantCode(t, "publish", err, codes.NotFound)
	var keys []string
	for _, r := range td.calls(t) {
		if r.RPC == "NodePublishVolume" {
			keys = r.SecretKeys
		}
	}
	if !slices.Equal(keys, []string{"password", "user"}) {
		t.Errorf("secret keys in the call log %q, want [password user]", keys)
	}
	_, err = c.NodePublishVolume(t.Context(), &csi.NodePublishVolumeRequest{
		VolumeId: "no-such-volume", TargetPath: filepath.Join(td.dir, "t"), VolumeCapability: rwo,
		VolumeContext: map[string]string{requiredSecretKey: "token"}, Secrets: map[string]string{"user": "value-of-user"},
	})
	wantCode(t, "publish without the required secret", err, codes.PermissionDenied)
	b, err := os.ReadFile(td.callLog)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "value-of-") {
		t.Errorf("the call log holds a secret's value:\n%s", b)
	}
}
