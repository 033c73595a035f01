package crisetup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podhost/podhost/sdk/cgroupdir"
)

const (
	cgroupRoot     = "/sys/fs/cgroup"
	cgroupBusyWait = 30 * time.Second
)

// taskIDs lists the IDs of the tasks (sandboxes and containers) the instance
// has bundles for in its state dir.
func (c *Containerd) taskIDs() []string {
	entries, err := os.ReadDir(filepath.Join(c.State, "io.containerd.runtime.v2.task", Namespace))
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// removeShimSockets removes the sockets of the instance's killed shims.
// containerd 1.6 puts them under /run/containerd/s/ whatever its state dir
// is, and a killed shim leaves its socket behind; each bundle records the
// address in its "address" file.
func (c *Containerd) removeShimSockets() {
	for _, id := range c.taskIDs() {
		addr, err := os.ReadFile(filepath.Join(c.State, "io.containerd.runtime.v2.task", Namespace, id, "address"))
		if err != nil {
			continue
		}
		sock := strings.TrimPrefix(strings.TrimSpace(string(addr)), "unix://")
		if strings.HasPrefix(sock, "/run/containerd/s/") {
			_ = os.Remove(sock)
		}
	}
}

// removeCgroups removes the cgroups CRI made for the given task IDs (with no
// cgroup parent they are k8s.io/ID in every hierarchy; below a pod cgroup,
// kubepods/…/pod<uid>/ID, and then the pod cgroup goes too). runc removes them
// when a task is deleted; after a crash nobody does. It only rmdirs, so a
// cgroup that still holds a process stays and is reported. A killed
// container stays a zombie until PID 1 reaps it, which on these VMs takes a
// while, and cgroup v1 refuses the rmdir until then: EBUSY is retried for up
// to cgroupBusyWait.
func removeCgroups(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	roots := []string{cgroupRoot} // the unified hierarchy of cgroup v2
	if hierarchies, err := os.ReadDir(cgroupRoot); err == nil {
		for _, h := range hierarchies {
			if h.IsDir() {
				roots = append(roots, filepath.Join(cgroupRoot, h.Name()))
			}
		}
	}
	var dirs []string
	pods := map[string]bool{}
	for _, root := range roots {
		for _, id := range ids {
			dirs = append(dirs, filepath.Join(root, Namespace, id))
			// Below a pod cgroup (the runtime plugin gives every pod
			// one): kubepods[/burstable|/besteffort]/pod<uid>/<id>.
			for _, qos := range []string{"", "burstable", "besteffort"} {
				found, _ := filepath.Glob(filepath.Join(root, "kubepods", qos, "pod*", id))
				for _, d := range found {
					dirs = append(dirs, d)
					pods[filepath.Dir(d)] = true
				}
			}
		}
	}
	if err := cgroupdir.Remove(ctx, dirs, cgroupBusyWait); err != nil {
		return err
	}
	// Then the pod cgroups that held them, emptied now.
	var podDirs []string
	for d := range pods {
		podDirs = append(podDirs, d)
	}
	return cgroupdir.Remove(ctx, podDirs, cgroupBusyWait)
}
