package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Errors of the scratch logic; server.go maps them to gRPC codes.
var (
	errInvalid      = errors.New("invalid argument")
	errNotStaged    = errors.New("volume is not staged")
	errOtherVolume  = errors.New("path holds something else")
	errNotPublished = errors.New("not a published volume")
)

// Usage is the space and inode usage of a filesystem.
type Usage struct {
	TotalBytes, UsedBytes, AvailableBytes    int64
	TotalInodes, UsedInodes, AvailableInodes int64
}

// scratch keeps volumes as directories. It holds no state of its own: all of
// it is on disk, so a restarted plugin carries on where it stopped.
type scratch struct {
	// statfs reports the usage of the filesystem holding a path.
	statfs func(path string) (Usage, error)
}

// The layout of a staged volume: <staging>/scratch/volume-id holds the ID.
const (
	stagedDir  = "scratch"
	markerFile = "volume-id"
)

// Stage creates the volume's directory under stagingPath and marks it as
// id's. Staging the same volume again changes nothing; another volume's
// staging path is errOtherVolume.
func (s *scratch) Stage(_ context.Context, id, stagingPath string) error {
	if err := required("volume id", id, "staging path", stagingPath); err != nil {
		return err
	}
	switch staged, err := stagedID(stagingPath); {
	case err != nil:
		return err
	case staged == id:
		return nil
	case staged != "":
		return fmt.Errorf("staging path %s holds volume %q: %w", stagingPath, staged, errOtherVolume)
	}
	dir := filepath.Join(stagingPath, stagedDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating volume directory: %w", err)
	}
	// The marker is written last and atomically: until it exists, the
	// volume is not staged and Stage can simply be retried.
	tmp := filepath.Join(dir, markerFile+".tmp")
	if err := os.WriteFile(tmp, []byte(id), 0o640); err != nil {
		return fmt.Errorf("writing volume marker: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, markerFile)); err != nil {
		return fmt.Errorf("writing volume marker: %w", err)
	}
	return nil
}

// Unstage removes the volume's directory. It succeeds when there is nothing
// to remove, and leaves another volume's directory alone.
func (s *scratch) Unstage(_ context.Context, id, stagingPath string) error {
	if err := required("volume id", id, "staging path", stagingPath); err != nil {
		return err
	}
	staged, err := stagedID(stagingPath)
	if err != nil || staged != id {
		return err
	}
	// Remove the marker first, so an interrupted Unstage is "not staged".
	if err := os.Remove(filepath.Join(stagingPath, stagedDir, markerFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing volume marker: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(stagingPath, stagedDir)); err != nil {
		return fmt.Errorf("removing volume directory: %w", err)
	}
	return nil
}

// Publish creates targetPath as a directory for one pod once the volume is
// staged at stagingPath. Publishing again changes nothing.
func (s *scratch) Publish(_ context.Context, id, stagingPath, targetPath string, readonly bool) error {
	if err := required("volume id", id, "staging path", stagingPath, "target path", targetPath); err != nil {
		return err
	}
	staged, err := stagedID(stagingPath)
	if err != nil {
		return err
	}
	if staged != id {
		return fmt.Errorf("volume %q at %s: %w", id, stagingPath, errNotStaged)
	}
	mode := fs.FileMode(0o750)
	if readonly {
		mode = 0o550
	}
	err = os.Mkdir(targetPath, mode)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Lstat(targetPath); serr == nil && fi.IsDir() {
			return nil
		}
		return fmt.Errorf("target path %s is not a directory: %w", targetPath, errOtherVolume)
	}
	if err != nil {
		return fmt.Errorf("creating target path: %w", err)
	}
	return nil
}

// Unpublish removes targetPath and what the pod wrote there. It succeeds
// when targetPath does not exist.
func (s *scratch) Unpublish(_ context.Context, id, targetPath string) error {
	if err := required("volume id", id, "target path", targetPath); err != nil {
		return err
	}
	if err := os.RemoveAll(targetPath); err != nil {
		return fmt.Errorf("removing target path: %w", err)
	}
	return nil
}

// Metrics reports the usage of the filesystem holding the published
// directory volumePath.
func (s *scratch) Metrics(_ context.Context, id, volumePath string) (Usage, error) {
	if err := required("volume id", id, "volume path", volumePath); err != nil {
		return Usage{}, err
	}
	fi, err := os.Lstat(volumePath)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() {
		return Usage{}, fmt.Errorf("%s: %w", volumePath, errNotPublished)
	}
	if err != nil {
		return Usage{}, fmt.Errorf("inspecting volume path: %w", err)
	}
	u, err := s.statfs(volumePath)
	if err != nil {
		return Usage{}, fmt.Errorf("reading filesystem usage of %s: %w", volumePath, err)
	}
	return u, nil
}

// stagedID returns the ID of the volume staged at stagingPath, or "" when
// none is.
func stagedID(stagingPath string) (string, error) {
	b, err := os.ReadFile(filepath.Join(stagingPath, stagedDir, markerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading volume marker: %w", err)
	}
	return string(bytes.TrimSpace(b)), nil
}

// required returns errInvalid naming the first empty value of name/value
// pairs.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return fmt.Errorf("%s is empty: %w", pairs[i], errInvalid)
		}
	}
	return nil
}
