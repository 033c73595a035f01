package scsi

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Cleanup removes a disk from the node: it flushes its multipath device
// with multipath -f, when sysfs still shows it, then deletes every SCSI
// disk under it. d.Paths must be the paths recorded when the disk was
// found, so that a cleanup interrupted after the flush still deletes them.
func (t Tree) Cleanup(ctx context.Context, run Runner, multipath string, d Disk) error {
	paths := d.Paths
	if IsMultipath(d.Name) && t.Exists(d.Name) {
		paths = append(paths, t.Slaves(d.Name)...)
		if _, err := run.Run(ctx, multipath, "-f", t.DevPath(d.Name)); err != nil {
			return fmt.Errorf("flushing multipath device %s: %w", d.Name, err)
		}
	}
	var errs []error
	for _, p := range sortedUnique(paths) {
		errs = append(errs, t.Delete(p))
	}
	return errors.Join(errs...)
}

// Retry calls f at once and then every interval until it succeeds, ctx
// ends, or budget has passed since the first call; it returns f's last
// error. wait sleeps between calls and is time.After in production.
func Retry(ctx context.Context, interval, budget time.Duration, wait func(time.Duration) <-chan time.Time, f func() error) error {
	var err error
	for spent := time.Duration(0); ; spent += interval {
		if err = f(); err == nil {
			return nil
		}
		if spent+interval > budget {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-wait(interval):
		}
	}
}
