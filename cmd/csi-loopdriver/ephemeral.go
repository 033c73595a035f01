package main

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Inline ephemeral volumes, as the Kubernetes CSI hostpath driver serves
// them: a publish whose volume_context says ephemeral is never staged; the
// driver makes a volume for it on the spot (of the context's "size", or
// the default size), formats and mounts it at the target, and deletes it
// when the target is unpublished. The CO names such a volume by a handle
// of its own, never by an ID the driver handed out, so the driver keeps
// the volume under an ID derived from the handle.

// ephemeralKey marks an inline ephemeral volume in a publish's
// volume_context, as a kubelet sets it.
const ephemeralKey = "csi.storage.k8s.io/ephemeral"

// ephemeralSizeKey is the volume_context key that sizes an inline volume.
const ephemeralSizeKey = "size"

// ephemeralID is the driver's ID of the inline volume the CO calls handle.
func ephemeralID(handle string) string { return volumeID("ephemeral:" + handle) }

// internalID is the driver's ID of the volume a node call names: an ID
// the driver handed out as it is, an inline volume's handle mapped.
func (d *driver) internalID(id string) string {
	if validID.MatchString(id) {
		return id
	}
	return ephemeralID(id)
}

// publishEphemeral creates the inline volume handle and publishes it at
// target. A failed publish deletes what it created.
func (d *driver) publishEphemeral(ctx context.Context, handle, staging, target string, c volumeCap, readOnly bool, volCtx map[string]string) error {
	if staging != "" {
		return fmt.Errorf("staging_target_path: an inline ephemeral volume is never staged, got %q: %w", staging, errInvalid)
	}
	if c.block {
		return fmt.Errorf("volume_capability: an inline ephemeral volume is a mount volume, not block: %w", errInvalid)
	}
	size := d.cfg.defaultVolumeSize
	if s, ok := volCtx[ephemeralSizeKey]; ok {
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Value() < minVolumeSize {
			return fmt.Errorf("volume_context[%q]: %q is not a size of at least %d bytes: %w", ephemeralSizeKey, s, minVolumeSize, errInvalid)
		}
		size = q.Value()
	}
	id := ephemeralID(handle)
	if _, err := d.vols.create("ephemeral:"+handle, size, size, size); err != nil {
		return err
	}
	err := d.publish(ctx, id, "", target, c, readOnly, true)
	if err != nil {
		d.removeIfUnused(id)
	}
	return err
}

// unpublishAny unpublishes target of the volume id names, and deletes an
// inline volume once nothing publishes it; an inline volume already
// deleted is unpublished.
func (d *driver) unpublishAny(ctx context.Context, id, target string) error {
	internal := d.internalID(id)
	if internal == id {
		return d.unpublish(ctx, id, target)
	}
	if _, err := d.vols.get(internal); errors.Is(err, errNotFound) {
		// Deleted by an earlier unpublish: nothing is published.
		return nil
	}
	if err := d.unpublish(ctx, internal, target); err != nil {
		return err
	}
	d.removeIfUnused(internal)
	return nil
}

// removeIfUnused deletes the inline volume id when no target holds it.
func (d *driver) removeIfUnused(id string) {
	unlock, err := d.lockVolume(id)
	if err != nil {
		d.log.Error("deleting an inline volume", "volume", id, "err", err)
		return
	}
	defer unlock()
	if _, ok, err := d.readRecord(id); err != nil || ok {
		return
	}
	if err := d.vols.remove(id); err != nil && !errors.Is(err, errNotFound) {
		d.log.Error("deleting an inline volume", "volume", id, "err", err)
	}
}
