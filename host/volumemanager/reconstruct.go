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
// volume from what is on disk. It is read-only, so it may be asked again.
type Reconstructor interface {
	Reconstruct(ctx context.Context, dir PodVolumeDir) (Reconstructed, error)
}

// ErrReconstruct is wrapped by the errors Reconstruct reports for
// directories it could not rebuild.
var ErrReconstruct = errors.New("volume reconstruction failed")

// ErrNotMounted is wrapped by a Reconstructor's error when the plugin
// finds nothing mounted at the directory's target (and the target is no
// mount point): the pod volume is not published, so there is nothing to
// rebuild and nothing to keep in use for it.
var ErrNotMounted = errors.New("nothing is mounted at the pod volume directory")

// ReconstructError is the failure to rebuild one pod volume directory.
type ReconstructError struct {
	Dir PodVolumeDir
	Err error
}

func (e *ReconstructError) Error() string {
	return fmt.Sprintf("%v: pod %s volume %s (%s): %v", ErrReconstruct, e.Dir.Pod, e.Dir.Name, e.Dir.Plugin, e.Err)
}

// Unwrap makes errors.Is true for ErrReconstruct and for the cause.
func (e *ReconstructError) Unwrap() []error { return []error{ErrReconstruct, e.Err} }

// dirKey names a pod volume directory: a record explains a directory only
// when pod, spec name, plugin and mode all agree.
type dirKey struct {
	pod          types.UID
	name, plugin string
	block        bool
}

func (d PodVolumeDir) key() dirKey { return dirKey{d.Pod, d.Name, d.Plugin, d.Block} }

// placeholderID is the name of the placeholder of a directory whose
// volume is not known.
func placeholderID(dir PodVolumeDir) VolumeID {
	return VolumeID(dir.Plugin + "/" + string(dir.Pod) + "-" + dir.Name)
}

// ask asks the plugin about dir; a failure is a *ReconstructError.
func ask(ctx context.Context, plugins Reconstructor, dir PodVolumeDir) (Reconstructed, error) {
	ans, err := plugins.Reconstruct(ctx, dir)
	if err == nil && ans.Volume.ID == "" {
		err = errors.New("the plugin returned no volume name")
	}
	if err == nil && (ans.Volume.Unresolved || ans.Volume.Plugin != dir.Plugin || ans.Volume.Block != dir.Block) {
		err = fmt.Errorf("the plugin answered with volume %s of plugin %s (block %v)", ans.Volume.ID, ans.Volume.Plugin, ans.Volume.Block)
	}
	if err != nil {
		return Reconstructed{}, &ReconstructError{Dir: dir, Err: err}
	}
	return ans, nil
}

// Reconstruct rebuilds the actual state after a host restart from the
// saved records and the pod volume directories on disk, asking the
// plugin about every directory that no record explains (none names it,
// or the one that does disagrees on the plugin or the volume mode, or is
// itself a placeholder). The rules:
//
//   - a record's mounted device or pod mount whose directory is found
//     stays mounted: nothing is staged or published again;
//   - a record's pod mount whose directory is gone becomes uncertain, so
//     that unpublish still runs (it must succeed on a missing target);
//   - a directory the plugin rebuilds joins its volume, mounted if the
//     plugin says so and uncertain otherwise;
//   - a directory at which the plugin finds nothing mounted
//     (ErrNotMounted) is left out;
//   - a directory the plugin cannot rebuild becomes a placeholder volume
//     (Unresolved) with the pod uncertain: it stays in use, and the
//     reconciler asks again with back-off (OpReconstruct). Its error, a
//     *ReconstructError, is returned.
//
// Nothing here unstages: the reconciler does that only after the desired
// state is populated, so a running pod's device is never unstaged.
func Reconstruct(ctx context.Context, recs []Record, dirs []PodVolumeDir, plugins Reconstructor) ([]Record, error) {
	found := map[dirKey]bool{}
	for _, d := range dirs {
		found[d.key()] = true
	}
	byID := map[VolumeID]*Record{}
	var order []VolumeID
	known := map[dirKey]bool{}
	for i := range recs {
		rec := recs[i]
		rec.Pods = nil
		for _, p := range recs[i].Pods {
			k := PodVolumeDir{p.Pod, rec.Volume.Plugin, p.Name, rec.Volume.Block}.key()
			switch {
			case rec.Volume.Unresolved && found[k]:
				continue // asked again below
			case rec.Volume.Unresolved:
			case p.State == Mounted && !found[k]:
				p.State = Uncertain
			}
			known[k] = true
			rec.Pods = append(rec.Pods, p)
		}
		byID[rec.Volume.ID] = &rec
		order = append(order, rec.Volume.ID)
	}
	var errs []error
	for _, dir := range dirs {
		if known[dir.key()] {
			continue
		}
		ans, err := ask(ctx, plugins, dir)
		if errors.Is(err, ErrNotMounted) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			ans = Reconstructed{Volume: Volume{ID: placeholderID(dir), Plugin: dir.Plugin, Block: dir.Block, Unresolved: true}}
		}
		pr := PodRecord{Pod: dir.Pod, Name: dir.Name, State: Uncertain}
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
		if rec := byID[id]; !rec.Volume.Unresolved || len(rec.Pods) > 0 {
			out = append(out, *rec)
		}
	}
	return out, errors.Join(errs...)
}
