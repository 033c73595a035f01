package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// fakeLoops is loopDevices in memory; like losetup, detach fails once
// its context is done.
type fakeLoops struct{ attached map[string]string }

func (f *fakeLoops) attach(_ context.Context, image string) (string, error) {
	if f.attached == nil {
		f.attached = map[string]string{}
	}
	f.attached[image] = "/dev/loop-fake"
	return f.attached[image], nil
}

func (f *fakeLoops) find(image string) (string, error) { return f.attached[image], nil }

func (f *fakeLoops) detach(ctx context.Context, dev string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for image, d := range f.attached {
		if d == dev {
			delete(f.attached, image)
		}
	}
	return nil
}

// failingMounts is a mounter whose every mount fails.
type failingMounts struct{}

var errMountFails = errors.New("mount fails")

func (failingMounts) formatAndMount(string, string, string, []string) error { return errMountFails }
func (failingMounts) bindMount(string, string, bool) error                  { return errMountFails }
func (failingMounts) unmount(string) error                                  { return nil }
func (failingMounts) isMountPoint(path string) (bool, error) {
	_, err := os.Stat(path)
	return false, err
}

// TestFailedCallsUndoneAfterTheCallerLeft: when a stage or publish fails
// with the caller gone (its context done), the driver still undoes it.
func TestFailedCallsUndoneAfterTheCallerLeft(t *testing.T) {
	tests := []struct {
		name string
		call func(d *driver, ctx context.Context, id, dir string) error
	}{
		{"stage", func(d *driver, ctx context.Context, id, dir string) error {
			return d.stage(ctx, id, dir, volumeCap{})
		}},
		{"publish without staging", func(d *driver, ctx context.Context, id, dir string) error {
			return d.publish(ctx, id, "", filepath.Join(dir, "target"), volumeCap{}, false, false)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			loops := &fakeLoops{}
			d := &driver{
				cfg:     config{stageUnstage: tt.name == "stage"},
				vols:    volumeStore{dir: filepath.Join(dir, "volumes")},
				nodeDir: dir,
				loops:   loops,
				mounts:  failingMounts{},
				log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			v, err := d.vols.create("v", minVolumeSize, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if err := tt.call(d, ctx, v.ID, dir); !errors.Is(err, errMountFails) {
				t.Fatalf("error %v, want %v", err, errMountFails)
			}
			if len(loops.attached) != 0 {
				t.Errorf("loop devices left attached: %v", loops.attached)
			}
			if _, ok, err := d.readRecord(v.ID); ok || err != nil {
				t.Errorf("node record left: %v, %v", ok, err)
			}
		})
	}
}
