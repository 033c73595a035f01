package eviction

import (
	"context"
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// writableLayers are the writable layer usage of each pod's containers by
// pod UID and container name, from one ListStats answer: of several
// instances of a container, the newest.
func writableLayers(rt *runtimev1.ListStatsResponse) map[types.UID]map[string]uint64 {
	sandboxes := map[string]types.UID{}
	for _, s := range rt.GetSandboxes() {
		sandboxes[s.GetSandboxId()] = types.UID(s.GetMetadata().GetUid())
	}
	type newest struct {
		created int64
		used    uint64
	}
	seen := map[types.UID]map[string]newest{}
	for _, c := range rt.GetContainers() {
		uid, ok := sandboxes[c.GetSandboxId()]
		if !ok || c.GetWritableLayer() == nil {
			continue
		}
		name := c.GetMetadata().GetName()
		if seen[uid] == nil {
			seen[uid] = map[string]newest{}
		}
		if old, ok := seen[uid][name]; ok && old.created > c.GetCreatedAt() {
			continue
		}
		seen[uid][name] = newest{created: c.GetCreatedAt(), used: c.GetWritableLayer().GetUsedBytes()}
	}
	out := make(map[types.UID]map[string]uint64, len(seen))
	for uid, cs := range seen {
		out[uid] = make(map[string]uint64, len(cs))
		for name, n := range cs {
			out[uid][name] = n.used
		}
	}
	return out
}

// measurePod is the pod's usage: the writable layers given, and its
// containers' log directories and disk-backed emptyDirs measured under
// root (the host's root directory).
func measurePod(ctx context.Context, root string, pod *v1.Pod, layers map[string]uint64) (Usage, error) {
	u := Usage{Containers: map[string]ContainerUsage{}, EmptyDirs: map[string]uint64{}}
	logDir := runtimemanager.PodLogDir(root, pod.Namespace, pod.Name, pod.UID)
	add := func(c *v1.Container) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		logs, err := diskUsage(filepath.Join(logDir, c.Name))
		if err != nil {
			return fmt.Errorf("measuring the logs of container %s: %w", c.Name, err)
		}
		u.Containers[c.Name] = ContainerUsage{WritableLayer: layers[c.Name], Logs: logs}
		return nil
	}
	for i := range pod.Spec.InitContainers {
		if err := add(&pod.Spec.InitContainers[i]); err != nil {
			return Usage{}, err
		}
	}
	for i := range pod.Spec.Containers {
		if err := add(&pod.Spec.Containers[i]); err != nil {
			return Usage{}, err
		}
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.EmptyDir == nil || vol.EmptyDir.Medium != v1.StorageMediumDefault {
			continue
		}
		if err := ctx.Err(); err != nil {
			return Usage{}, err
		}
		used, err := diskUsage(hostvolumes.PodVolumeDir(root, pod.UID, volumemanager.PluginEmptyDir, vol.Name))
		if err != nil {
			return Usage{}, fmt.Errorf("measuring emptyDir %s: %w", vol.Name, err)
		}
		u.EmptyDirs[vol.Name] = used
	}
	return u, nil
}
