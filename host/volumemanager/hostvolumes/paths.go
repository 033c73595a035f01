package hostvolumes

import (
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// PodDir is the directory of pod uid under root: <root>/pods/<uid>.
func PodDir(root string, uid types.UID) string {
	return filepath.Join(root, "pods", string(uid))
}

// PodVolumeDir is the directory of pod uid's volume name of plugin:
// <root>/pods/<uid>/volumes/<plugin with "~" for "/">/<name>.
func PodVolumeDir(root string, uid types.UID, plugin, name string) string {
	return filepath.Join(PodDir(root, uid), "volumes", escapePlugin(plugin), name)
}

func escapePlugin(plugin string) string { return strings.ReplaceAll(plugin, "/", "~") }
func unescapePlugin(dir string) string  { return strings.ReplaceAll(dir, "~", "/") }

// PodDevicePath is the file a raw block volume name of pod uid is mapped
// on: <root>/pods/<uid>/volumeDevices/<plugin with "~" for "/">/<name>.
func PodDevicePath(root string, uid types.UID, plugin, name string) string {
	return filepath.Join(PodDir(root, uid), "volumeDevices", escapePlugin(plugin), name)
}
