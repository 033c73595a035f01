package main

import (
	"context"
	"fmt"
	"time"

	"github.com/podhost/podhost/plugins/internal/scsi"
	"github.com/podhost/podhost/plugins/internal/scsivolume"
)

// The volume context keys of an FC volume.
const (
	keyWWNs  = "targetWWNs" // comma-separated
	keyLUN   = "lun"
	keyWWIDs = "wwids" // comma-separated
)

// fc is the FC transport: discovery by WWNs and LUN or WWIDs, and device
// cleanup with retries.
type fc struct {
	cfg  func() *config
	run  scsi.Runner
	wait func(time.Duration) <-chan time.Time // time.After; tests make it immediate
}

func (f *fc) tree() scsi.Tree { c := f.cfg(); return scsi.Tree{Sys: c.SysfsRoot, Dev: c.DevRoot} }

func targetOf(vc map[string]string) (scsi.FCTarget, error) {
	t := scsi.FCTarget{WWNs: scsivolume.List(vc[keyWWNs]), LUN: vc[keyLUN], WWIDs: scsivolume.List(vc[keyWWIDs])}
	if err := t.Validate(); err != nil {
		return t, fmt.Errorf("volume_context: %w: %w", err, scsivolume.ErrInvalid)
	}
	return t, nil
}

func (f *fc) Attach(_ context.Context, vc, _ map[string]string) (scsi.Disk, error) {
	t, err := targetOf(vc)
	if err != nil {
		return scsi.Disk{}, err
	}
	return f.tree().FindFC(t)
}

// Release flushes and deletes the recorded devices, retrying every
// cleanup interval for the cleanup budget.
func (f *fc) Release(ctx context.Context, rec scsivolume.Record, _ []scsivolume.Record) error {
	c := f.cfg()
	err := scsi.Retry(ctx, time.Duration(c.CleanupInterval), time.Duration(c.CleanupBudget), f.wait, func() error {
		return f.tree().Cleanup(ctx, f.run, c.Multipath, rec.Disk)
	})
	if err != nil {
		return fmt.Errorf("fc: failed to detach disk: %w", err)
	}
	return nil
}

// Detach cleans up the LUN's devices, if the node still shows them.
func (f *fc) Detach(ctx context.Context, vc map[string]string, _ []scsivolume.Record) error {
	t, err := targetOf(vc)
	if err != nil {
		return err
	}
	d, ok := f.tree().ExistingFC(t)
	if !ok {
		return nil
	}
	return f.tree().Cleanup(ctx, f.run, f.cfg().Multipath, d)
}

// LockKey is the LUN: calls for one LUN run one at a time.
func (f *fc) LockKey(vc map[string]string) string {
	return "fc\x00" + vc[keyWWNs] + "\x00" + vc[keyLUN] + "\x00" + vc[keyWWIDs]
}
