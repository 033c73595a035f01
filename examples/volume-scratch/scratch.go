package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/podhost/podhost/sdk/mount"
)

// Errors of the scratch logic; server.go maps them (and mount.ErrNotMounted).
var (
	errInvalid     = errors.New("invalid argument")
	errNotStaged   = errors.New("volume is not staged")
	errOtherVolume = errors.New("path holds another volume")
)

// scratch keeps each volume as a directory under root, bind-mounted on the
// staging path and from there on target paths; its state is the mount table.
type scratch struct {
	root   func() string             // the configured root
	midway func(ctx context.Context) // test hook (volumetest.Setup.Midway); a no-op in production
}

// Stage mounts the volume's directory, created if needed, on stagingPath.
func (s *scratch) Stage(ctx context.Context, id, stagingPath string) error {
	dir, err := s.dir(id, "staging path", stagingPath)
	if err != nil {
		return err
	}
	if mounted, ours, err := mount.MountedFrom(stagingPath, dir); err != nil || ours {
		return err
	} else if mounted {
		return fmt.Errorf("staging path %s: %w", stagingPath, errOtherVolume)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating volume directory: %w", err)
	}
	err = mount.BindOnce(dir, stagingPath, false)
	s.midway(ctx)
	return errors.Join(err, ctx.Err()) // a gone caller makes the call uncertain
}

// Unstage unmounts stagingPath, unless another volume's, and deletes the volume.
func (s *scratch) Unstage(_ context.Context, id, stagingPath string) error {
	dir, err := s.dir(id, "staging path", stagingPath)
	if mounted, ours, _ := mount.MountedFrom(stagingPath, dir); err != nil || mounted && !ours {
		return err
	}
	if err := mount.Unmount(stagingPath); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// Publish mounts the staged volume on targetPath, read-only if asked.
func (s *scratch) Publish(ctx context.Context, id, stagingPath, targetPath string, readonly bool) error {
	dir, err := s.dir(id, "staging path", stagingPath, "target path", targetPath)
	if err != nil {
		return err
	}
	if _, ours, err := mount.MountedFrom(stagingPath, dir); err != nil || !ours {
		return errors.Join(err, fmt.Errorf("volume %q at %s: %w", id, stagingPath, errNotStaged))
	}
	err = mount.BindOnce(stagingPath, targetPath, readonly)
	s.midway(ctx)
	return errors.Join(err, ctx.Err())
}

// Unpublish unmounts and removes targetPath.
func (s *scratch) Unpublish(_ context.Context, id, targetPath string) error {
	if _, err := s.dir(id, "target path", targetPath); err != nil {
		return err
	}
	return mount.UnmountAndRemove(targetPath)
}

// Metrics reports the usage of the filesystem under the published volumePath.
func (s *scratch) Metrics(_ context.Context, id, volumePath string) (mount.Usage, error) {
	if _, err := s.dir(id, "volume path", volumePath); err != nil {
		return mount.Usage{}, err
	}
	return mount.MountUsage(volumePath) // mount.ErrNotMounted when not published
}

// dir returns volume id's directory; id must be a plain name, the named paths set.
func (s *scratch) dir(id string, paths ...string) (string, error) {
	if id == "" || id == "." || id == ".." || filepath.Base(id) != id {
		return "", fmt.Errorf("volume id %q is not a plain name: %w", id, errInvalid)
	}
	for i := 0; i+1 < len(paths); i += 2 {
		if paths[i+1] == "" {
			return "", fmt.Errorf("%s is empty: %w", paths[i], errInvalid)
		}
	}
	return filepath.Join(s.root(), id), nil
}
