package volumeplugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
)

// csiDataFile is the directory's own data of a CSI pod volume, beside its
// mount target, as the kubelet keeps it: what a restart that lost
// state.db needs to tear the volume down through its driver.
const csiDataFile = "vol_data.json"

// maxCSIData bounds the read of a data file (it is a few hundred bytes).
const maxCSIData = 64 << 10

// csiData is the content of vol_data.json.
type csiData struct {
	Driver       string `json:"driverName"`
	VolumeHandle string `json:"volumeHandle"`
	SpecName     string `json:"specVolID"`
	// LifecycleMode is Persistent for a PersistentVolume's (shared,
	// staged) volume, Ephemeral for an inline one.
	LifecycleMode string `json:"volumeLifecycleMode"`
	PV            string `json:"persistentVolume,omitempty"`
	ReadOnly      bool   `json:"readOnly,omitempty"`
}

const (
	modePersistent = "Persistent"
	modeEphemeral  = "Ephemeral"
)

func csiDataPath(root string, uid types.UID, name string) string {
	return filepath.Join(hostvolumes.PodVolumeDir(root, uid, volumemanager.PluginCSI, name), csiDataFile)
}

// writeCSIData writes pv's data beside its target, atomically.
func writeCSIData(root string, pv volumemanager.PodVolume) error {
	d := csiData{Driver: pv.Volume.CSI.Driver, VolumeHandle: pv.Volume.CSI.VolumeHandle, SpecName: pv.Name,
		LifecycleMode: modeEphemeral, PV: pv.Volume.PV, ReadOnly: pv.Volume.ReadOnly}
	if pv.Volume.Shared {
		d.LifecycleMode = modePersistent
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", csiDataFile, err)
	}
	path := csiDataPath(root, pv.Pod, pv.Name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", csiDataFile, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", csiDataFile, err)
	}
	return nil
}

// removeCSIData removes pv's data; none is success.
func removeCSIData(root string, uid types.UID, name string) error {
	if err := os.Remove(csiDataPath(root, uid, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", csiDataFile, err)
	}
	return nil
}

// readCSIData reads the data of dir; ok is false when it has none. The
// file is untrusted: a driver or handle it names only selects a route and
// names a staging directory by its hash.
func readCSIData(root string, dir volumemanager.PodVolumeDir) (csiData, bool, error) {
	f, err := os.Open(csiDataPath(root, dir.Pod, dir.Name))
	if errors.Is(err, fs.ErrNotExist) {
		return csiData{}, false, nil
	}
	if err != nil {
		return csiData{}, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCSIData))
	if err != nil {
		return csiData{}, false, err
	}
	var d csiData
	if err := json.Unmarshal(b, &d); err != nil {
		return csiData{}, false, fmt.Errorf("%s of pod %s volume %s: %w", csiDataFile, dir.Pod, dir.Name, err)
	}
	if d.Driver == "" || d.VolumeHandle == "" || (d.LifecycleMode != modePersistent && d.LifecycleMode != modeEphemeral) {
		return csiData{}, false, fmt.Errorf("%s of pod %s volume %s: driverName, volumeHandle and volumeLifecycleMode (Persistent or Ephemeral) are required", csiDataFile, dir.Pod, dir.Name)
	}
	return d, true, nil
}
