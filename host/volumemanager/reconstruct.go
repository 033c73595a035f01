package volumemanager

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// PodVolumeDir is a pod volume directory found on disk after a restart:
// <root>/pods/<uid>/volumes/<plugin>/<name> (volumeDevices for Block).
type PodVolumeDir struct {
	Pod    types.UID
	Plugin string
	Name   string
	Block  bool
}

// DirLister lists the pod volume directories on disk.
type DirLister interface {
	PodVolumeDirs(ctx context.Context) ([]PodVolumeDir, error)
}

// Reconstructed is a plugin's answer about a pod volume directory: the
// volume it belongs to and what the mount table says.
type Reconstructed struct {
	Volume    Volume
	Published bool // the pod path is a mount point (or the block map exists)
	Staged    bool // the device's staging path is mounted (shared volumes)
}

// Reconstructor asks the plugin that owns a directory to rebuild the
// volume from what is on disk.
type Reconstructor interface {
	Reconstruct(ctx context.Context, dir PodVolumeDir) (Reconstructed, error)
}

// ErrReconstruct is wrapped by the errors Reconstruct reports for
// directories it could not rebuild.
var ErrReconstruct = errors.New("volume reconstruction failed")

// Reconstruct rebuilds the actual state after a host restart from the
// saved records and the pod volume directories on disk, asking the
// plugin only about directories that no record explains. The rules:
//
//   - a record's mounted device or pod mount whose directory is found
//     stays mounted: nothing is staged or published again;
//   - a record's pod mount whose directory is gone becomes uncertain, so
//     that unpublish still runs (it must succeed on a missing target);
//   - a directory the plugin rebuilds joins its volume, mounted if the
//     plugin says so and uncertain otherwise;
//   - a directory the plugin cannot rebuild becomes a placeholder volume
//     (Unresolved) with the pod uncertain: it stays in use and is only
//     unpublished once its pod is gone. Its error is returned.
//
// Nothing here unstages: the reconciler does that only after the desired
// state is populated, so a running pod's device is never unstaged.
func Reconstruct(ctx context.Context, recs []Record, dirs []PodVolumeDir, plugins Reconstructor) ([]Record, error) {
	found := map[[2]string]bool{}
	for _, d := range dirs {
		found[[2]string{string(d.Pod), d.Name}] = true
	}
	byID := map[VolumeID]*Record{}
	var order []VolumeID
	known := map[[2]string]bool{}
	for _, rec := range recs {
		rec := rec
		rec.Pods = append([]PodRecord(nil), rec.Pods...)
		for i, p := range rec.Pods {
			k := [2]string{string(p.Pod), p.Name}
			known[k] = true
			if p.State == Mounted && !found[k] && !rec.Volume.Unresolved {
				rec.Pods[i].State = Uncertain
			}
		}
		byID[rec.Volume.ID] = &rec
		order = append(order, rec.Volume.ID)
	}
	var errs []error
	for _, dir := range dirs {
		if known[[2]string{string(dir.Pod), dir.Name}] {
			continue
		}
		ans, err := plugins.Reconstruct(ctx, dir)
		if err == nil && ans.Volume.ID == "" {
			err = errors.New("the plugin returned no volume name")
		}
		var pr PodRecord
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: pod %s volume %s (%s): %w", ErrReconstruct, dir.Pod, dir.Name, dir.Plugin, err))
			ans = Reconstructed{Volume: Volume{
				ID:     VolumeID(dir.Plugin + "/" + string(dir.Pod) + "-" + dir.Name),
				Plugin: dir.Plugin, Block: dir.Block, Unresolved: true,
			}}
		}
		pr = PodRecord{Pod: dir.Pod, Name: dir.Name, State: Uncertain}
		if ans.Published {
			pr.State = Mounted
		}
		rec := byID[ans.Volume.ID]
		if rec == nil {
			rec = &Record{Volume: ans.Volume, Device: NotMounted}
			if ans.Volume.Shared {
				rec.Device = Uncertain
				if ans.Staged {
					rec.Device = Mounted
				}
			}
			byID[ans.Volume.ID] = rec
			order = append(order, ans.Volume.ID)
		}
		rec.Pods = append(rec.Pods, pr)
	}
	out := make([]Record, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, errors.Join(errs...)
}
