package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Plugins runs volume operations on the plugin that owns each volume
// (Volume.Plugin); the host's adapter handles emptyDir and hostPath
// itself. Every method must be idempotent and must succeed when there is
// nothing to undo (Unstage and Unpublish without a prior Stage or Publish,
// or with the staging or target directory missing). ctx is cancelled
// when the host stops or the plugin dies.
type Plugins interface {
	Stage(ctx context.Context, v Volume) error
	Unstage(ctx context.Context, v Volume) error
	Publish(ctx context.Context, pv PodVolume) error
	Unpublish(ctx context.Context, pv PodVolume) error
	Map(ctx context.Context, pv PodVolume) error
	Unmap(ctx context.Context, pv PodVolume) error
}

// Clock is the time source of the driver.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// ErrNotStarted is wrapped by the error of an operation that the driver
// did not hand to the plugin (its state could not be saved first). It is
// transient whatever the Classifier says.
var ErrNotStarted = errors.New("volume operation not started")

// call runs op on p.
func call(ctx context.Context, p Plugins, op Op) error {
	pv := PodVolume{Pod: op.Pod, Name: op.Name, Volume: op.Volume, Args: op.Args}
	switch op.Kind {
	case OpStage:
		return p.Stage(ctx, op.Volume)
	case OpUnstage:
		return p.Unstage(ctx, op.Volume)
	case OpPublish:
		return p.Publish(ctx, pv)
	case OpUnpublish:
		return p.Unpublish(ctx, pv)
	case OpMap:
		return p.Map(ctx, pv)
	case OpUnmap:
		return p.Unmap(ctx, pv)
	case OpReconstruct:
		return fmt.Errorf("%w: %v is no plugin operation", ErrNotStarted, op.Kind)
	}
	return fmt.Errorf("%w: unknown kind %v", ErrNotStarted, op.Kind)
}
