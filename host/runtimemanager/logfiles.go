package runtimemanager

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Rotated files are named <file>.<timestamp>, and <file>.<timestamp>.gz
// once compressed; compression writes <file>.<timestamp>.gz.tmp first. The
// timestamp has a fixed width, so names sort as times, and is finer than the
// kubelet's seconds so that two rotations cannot collide.
const (
	rotatedTimeFormat = "20060102-150405.000000"
	compressedSuffix  = ".gz"
	tmpSuffix         = ".tmp"
)

// logRotator rotates one container's log file under a policy.
type logRotator struct {
	policy LogRotation
	now    func() time.Time
	// reopen asks the runtime to reopen the container's log file; its
	// errors come from callError.
	reopen func(ctx context.Context) error
}

// rotate rotates the log file at path when it is bigger than the policy
// allows, and returns the name the file now has ("" when it was not
// rotated). Before it renames the file, it removes what an interrupted pass
// left, removes the oldest rotated files so that, with the new one and
// the file being written, at most MaxFiles remain, and gzips the ones it
// keeps.
func (r logRotator) rotate(ctx context.Context, path string) (string, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A reopen failed after the rename: ask for the file again.
		return "", stoppedIsFine(r.reopen(ctx))
	case err != nil:
		return "", fmt.Errorf("rotating log: %w", err)
	case info.Size() <= r.policy.MaxBytes:
		return "", nil
	}
	rotated, err := cleanRotated(path)
	if err != nil {
		return "", err
	}
	keep := r.policy.MaxFiles - 2
	for len(rotated) > keep {
		if err := os.Remove(rotated[0]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("removing rotated log: %w", err)
		}
		rotated = rotated[1:]
	}
	for _, f := range rotated {
		if !strings.HasSuffix(f, compressedSuffix) {
			if err := compressLog(f); err != nil {
				return "", err
			}
		}
	}
	return r.rotateLatest(ctx, path)
}

// rotateLatest renames the file being written and has the runtime reopen
// it. When the reopen fails and the runtime made no new file, the file gets
// its name back, so that the container goes on writing to <file>.
func (r logRotator) rotateLatest(ctx context.Context, path string) (string, error) {
	rotated := path + "." + r.now().UTC().Format(rotatedTimeFormat)
	if _, err := os.Lstat(rotated); err == nil {
		return "", fmt.Errorf("rotating log: %s exists already", rotated)
	}
	if err := os.Rename(path, rotated); err != nil {
		return "", fmt.Errorf("rotating log: %w", err)
	}
	err := r.reopen(ctx)
	if err == nil {
		return rotated, nil
	}
	if _, statErr := os.Lstat(path); !errors.Is(statErr, fs.ErrNotExist) {
		return rotated, err // the runtime did reopen: keep the rotation
	}
	if backErr := os.Rename(rotated, path); backErr != nil {
		return rotated, errors.Join(err, fmt.Errorf("renaming the log back: %w", backErr))
	}
	return "", stoppedIsFine(err)
}

// stoppedIsFine drops the errors of a reopen refused because the container
// stopped or went away: a stopped container's file is not rotated.
func stoppedIsFine(err error) error {
	if errors.Is(err, ErrRejected) || errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// cleanRotated returns the rotated files of the log at path, oldest first,
// after removing what an interrupted pass left: a partly written
// compressed file, or a file whose compressed copy is complete.
func cleanRotated(path string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("listing rotated logs: %w", err)
	}
	prefix := filepath.Base(path) + "."
	var files []string
	compressed := map[string]bool{}
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() {
			continue
		}
		full := filepath.Join(filepath.Dir(path), e.Name())
		stamp, tmp := strings.CutSuffix(stamp, tmpSuffix)
		stamp, gz := strings.CutSuffix(stamp, compressedSuffix)
		if _, err := time.Parse(rotatedTimeFormat, stamp); err != nil {
			continue // not ours
		}
		if tmp {
			if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("removing partial compressed log: %w", err)
			}
			continue
		}
		if gz {
			compressed[strings.TrimSuffix(full, compressedSuffix)] = true
		}
		files = append(files, full)
	}
	kept := files[:0]
	for _, f := range files {
		if compressed[f] {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("removing compressed log: %w", err)
			}
			continue
		}
		kept = append(kept, f)
	}
	slices.Sort(kept)
	return kept, nil
}

// compressLog replaces path with path.gz, written through a temporary
// file so that a crash never leaves a truncated .gz behind.
func compressLog(path string) (err error) {
	src, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("compressing log: %w", err)
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return fmt.Errorf("compressing log: %w", err)
	}
	tmp := path + compressedSuffix + tmpSuffix
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return fmt.Errorf("compressing log: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	zw := gzip.NewWriter(dst)
	_, err = io.Copy(zw, src)
	err = errors.Join(err, zw.Close(), dst.Close())
	if err != nil {
		return fmt.Errorf("compressing log %s: %w", path, err)
	}
	if err := os.Rename(tmp, path+compressedSuffix); err != nil {
		return fmt.Errorf("compressing log: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing compressed log: %w", err)
	}
	return nil
}

// removeRotatedLogs removes the rotated files of the log at path, for a
// container that is removed.
func removeRotatedLogs(path string) error {
	rotated, err := cleanRotated(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range rotated {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
