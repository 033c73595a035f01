package scsivolume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/podhost/podhost/plugins/internal/scsi"
	"github.com/podhost/podhost/sdk/mount"
)

// Errors of the volume logic; server.go maps them to codes.
var (
	ErrInvalid     = errors.New("invalid argument")
	errNotStaged   = errors.New("volume is not staged")
	errOtherVolume = errors.New("path holds another volume")
	errNotFound    = errors.New("not a published volume")
	errFinal       = errors.New("failed without effect")
)

// Transport is what differs between FC and iSCSI.
type Transport interface {
	// Attach makes the volume's disk reachable on the node and finds it.
	// Idempotent.
	Attach(ctx context.Context, volumeContext, secrets map[string]string) (scsi.Disk, error)
	// Release removes the staged disk of rec from the node once it is
	// unmounted (multipath flush, SCSI delete, iSCSI logout when the
	// target has no other user). others are the records of the other
	// staged volumes. Idempotent.
	Release(ctx context.Context, rec Record, others []Record) error
	// Detach releases the volume's disk, found from its context alone;
	// nothing to release is success.
	Detach(ctx context.Context, volumeContext map[string]string, others []Record) error
	// LockKey names what calls for the volume must not share with calls
	// for other volumes (an iSCSI target's sessions): they run one at a
	// time per key, and calls with different keys run in parallel, so
	// that a long FC cleanup holds up no other volume.
	LockKey(volumeContext map[string]string) string
}

// Volumes is the logic of one plugin. Tree and StateDir are read on each
// call, so that Configure can change them.
type Volumes struct {
	Transport Transport
	Tree      func() scsi.Tree
	StateDir  func() string
	// Midway is a test hook (volumetest.Setup.Midway) called after Stage
	// and Publish mounted; nil in production.
	Midway func(ctx context.Context)

	mu    sync.Mutex // guards locks
	locks map[string]*sync.Mutex
}

// lock takes the lock named key and returns its unlock.
func (v *Volumes) lock(key string) func() {
	v.mu.Lock()
	if v.locks == nil {
		v.locks = map[string]*sync.Mutex{}
	}
	l := v.locks[key]
	if l == nil {
		l = &sync.Mutex{}
		v.locks[key] = l
	}
	v.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// lockVolume takes the lock of calls that concern only volume id.
func (v *Volumes) lockVolume(id string) func() { return v.lock("volume\x00" + id) }

func (v *Volumes) records() records { return records{dir: v.StateDir()} }

func (v *Volumes) midway(ctx context.Context) error {
	if v.Midway != nil {
		v.Midway(ctx)
	}
	return ctx.Err() // a gone caller makes the call uncertain
}

// required checks that each named argument is set.
func required(args ...string) error {
	for i := 0; i+1 < len(args); i += 2 {
		if args[i+1] == "" {
			return fmt.Errorf("%s is required: %w", args[i], ErrInvalid)
		}
	}
	return nil
}

// Attach finds the volume's disk and returns the publish context that
// names it.
func (v *Volumes) Attach(ctx context.Context, id string, volumeContext, secrets map[string]string) (map[string]string, error) {
	if err := required("volume_id", id); err != nil {
		return nil, err
	}
	defer v.lock(v.Transport.LockKey(volumeContext))()
	d, err := v.Transport.Attach(ctx, volumeContext, secrets)
	if err != nil {
		return nil, err
	}
	return publishContext(d), nil
}

// Detach releases the volume's disk unless a staged volume still uses it.
func (v *Volumes) Detach(ctx context.Context, id string, volumeContext map[string]string) error {
	if err := required("volume_id", id); err != nil {
		return err
	}
	defer v.lock(v.Transport.LockKey(volumeContext))()
	recs, err := v.records().all()
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.VolumeID == id {
			return nil // still staged: Unstage releases it
		}
	}
	return v.Transport.Detach(ctx, volumeContext, recs)
}

// StageArgs are the arguments of Stage.
type StageArgs struct {
	ID, StagingPath         string
	PublishContext, Context map[string]string
	Secrets                 map[string]string
	SecretsDir              string
	Block                   bool
	FsType                  string
	MountFlags              []string
}

// Stage finds the disk, records it, and for a filesystem volume formats it
// when empty and mounts it on the staging path.
func (v *Volumes) Stage(ctx context.Context, a StageArgs) error {
	if err := required("volume_id", a.ID, "staging_path", a.StagingPath); err != nil {
		return err
	}
	defer v.lock(v.Transport.LockKey(a.Context))()
	rs := v.records()
	rec, err := rs.load(a.StagingPath)
	if err != nil {
		return err
	}
	mounted, err := mount.IsMounted(a.StagingPath)
	if err != nil {
		return err
	}
	switch {
	case rec != nil && rec.VolumeID != a.ID, rec == nil && mounted:
		return fmt.Errorf("staging path %s: %w", a.StagingPath, errOtherVolume)
	case rec != nil && rec.Block != a.Block:
		return fmt.Errorf("staging path %s is staged with another access type: %w", a.StagingPath, errOtherVolume)
	}
	if rec == nil {
		d, ok := v.diskFrom(a.PublishContext)
		if !ok {
			secrets, err := withSecretsDir(a.Secrets, a.SecretsDir)
			if err != nil {
				return err
			}
			if d, err = v.Transport.Attach(ctx, a.Context, secrets); err != nil {
				return err
			}
		}
		fsType := a.FsType
		if fsType == "" && !a.Block {
			fsType = "ext4"
		}
		rec = &Record{VolumeID: a.ID, StagingPath: a.StagingPath, Block: a.Block, FsType: fsType, Disk: d, Context: a.Context}
		if err := rs.save(*rec); err != nil {
			return err
		}
	}
	if !a.Block && !mounted {
		if err := mount.FormatAndMount(v.Tree().DevPath(rec.Disk.Name), a.StagingPath, rec.FsType, a.MountFlags); err != nil {
			if still, _ := mount.IsMounted(a.StagingPath); !still {
				return errors.Join(fmt.Errorf("%w: %w", errFinal, err), rs.remove(a.StagingPath))
			}
			return err
		}
	}
	return v.midway(ctx)
}

// diskFrom reads the disk Attach named in a publish context, if it is
// still there.
func (v *Volumes) diskFrom(pc map[string]string) (scsi.Disk, bool) {
	d, ok := diskOf(pc)
	if !ok {
		return d, false
	}
	if _, err := os.Stat(v.Tree().DevPath(d.Name)); err != nil {
		return d, false
	}
	return d, true
}

// Unstage unmounts the staging path and releases the disk. Without a
// record nothing was staged there; a record outliving the unmount (a
// release that failed) makes the next Unstage release the disk again.
func (v *Volumes) Unstage(ctx context.Context, id, stagingPath string) error {
	if err := required("volume_id", id, "staging_path", stagingPath); err != nil {
		return err
	}
	rs := v.records()
	rec, err := rs.load(stagingPath)
	if err != nil || rec == nil || rec.VolumeID != id {
		return err
	}
	defer v.lock(v.Transport.LockKey(rec.Context))()
	if rec, err = rs.load(stagingPath); err != nil || rec == nil || rec.VolumeID != id {
		return err // unstaged meanwhile
	}
	if err := mount.Unmount(stagingPath); err != nil {
		return err
	}
	all, err := rs.all()
	if err != nil {
		return err
	}
	var others []Record
	for _, r := range all {
		if r.StagingPath != rec.StagingPath {
			others = append(others, r)
		}
	}
	if err := v.Transport.Release(ctx, *rec, others); err != nil {
		return fmt.Errorf("releasing the disk of volume %s: %w", id, err)
	}
	return rs.remove(stagingPath)
}

// staged returns the record of the volume staged at stagingPath, or
// errNotStaged.
func (v *Volumes) staged(id, stagingPath string, block bool) (*Record, error) {
	rec, err := v.records().load(stagingPath)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.VolumeID != id || rec.Block != block {
		return nil, fmt.Errorf("volume %q at %s: %w", id, stagingPath, errNotStaged)
	}
	if !block {
		if mounted, err := mount.IsMounted(stagingPath); err != nil || !mounted {
			return nil, errors.Join(err, fmt.Errorf("volume %q at %s: %w", id, stagingPath, errNotStaged))
		}
	}
	return rec, nil
}

// Publish bind-mounts the staged volume on targetPath.
func (v *Volumes) Publish(ctx context.Context, id, stagingPath, targetPath string, readonly bool) error {
	if err := required("volume_id", id, "staging_path", stagingPath, "target_path", targetPath); err != nil {
		return err
	}
	defer v.lockVolume(id)()
	if _, err := v.staged(id, stagingPath, false); err != nil {
		return err
	}
	if err := mount.BindOnce(stagingPath, targetPath, readonly); err != nil {
		return err
	}
	return v.midway(ctx)
}

// Unpublish unmounts and removes targetPath.
func (v *Volumes) Unpublish(_ context.Context, id, targetPath string) error {
	if err := required("volume_id", id, "target_path", targetPath); err != nil {
		return err
	}
	defer v.lockVolume(id)()
	return mount.UnmountAndRemove(targetPath)
}
