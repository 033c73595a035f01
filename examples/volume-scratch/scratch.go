package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/mount"
)

type config struct {
	Root string `json:"root"` // holds the volumes, one directory each
}

func (c config) Validate(errs *sdk.FieldErrors) {
	if !filepath.IsAbs(c.Root) {
		errs.Addf("root", "want an absolute path, got %q", c.Root)
	}
}

type scratch struct{ config *sdk.Config[config] }

func (s *scratch) dir(id string) string { return filepath.Join(s.config.Get().Root, id) } // id: one path element

func (s *scratch) Stage(ctx context.Context, r sdk.StageRequest) error {
	dir := s.dir(r.VolumeID)
	if mounted, ours, err := mount.MountedFrom(r.StagingPath, dir); err != nil || ours {
		return err
	} else if mounted {
		return fmt.Errorf("staging path %s: %w", r.StagingPath, sdk.ErrAlreadyExists)
	} else if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	return errors.Join(mount.BindOnce(dir, r.StagingPath, false), sdk.Midway(ctx))
}

func (s *scratch) Unstage(_ context.Context, r sdk.UnstageRequest) error {
	if mounted, ours, err := mount.MountedFrom(r.StagingPath, s.dir(r.VolumeID)); err != nil || mounted && !ours {
		return err // another volume's staging path is not ours to undo
	} else if err := mount.Unmount(r.StagingPath); err != nil {
		return err
	}
	return os.RemoveAll(s.dir(r.VolumeID))
}

func (s *scratch) Publish(ctx context.Context, r sdk.PublishRequest) error {
	if _, ours, err := mount.MountedFrom(r.StagingPath, s.dir(r.VolumeID)); err != nil || !ours {
		return errors.Join(err, fmt.Errorf("volume %q at %s: %w", r.VolumeID, r.StagingPath, sdk.ErrNotStaged))
	}
	return errors.Join(mount.BindOnce(r.StagingPath, r.TargetPath, r.Readonly), sdk.Midway(ctx))
}

func (s *scratch) Unpublish(_ context.Context, r sdk.UnpublishRequest) error {
	return mount.UnmountAndRemove(r.TargetPath)
}

func (s *scratch) Metrics(_ context.Context, r sdk.MetricsRequest) (sdk.VolumeUsage, error) {
	return mount.MountUsage(r.VolumePath) // sdk.ErrNotFound when nothing is mounted there
}
