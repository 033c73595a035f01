package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/hostproc"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/images/localimages"
)

const namespace = "default"

// pod is a pod with a busybox container running the floor's script and
// each claim mounted at /<claim>.
func pod(name string, claims ...string) []byte {
	zero := int64(0)
	p := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: &zero,
			Containers: []v1.Container{{
				Name: floor.ContainerName, Image: localimages.BusyboxName, ImagePullPolicy: v1.PullNever,
				Command: []string{"sh", "-c", floor.TrapScript},
			}},
		},
	}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, v1.VolumeMount{Name: c, MountPath: "/" + c})
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}

// watcher follows the host's pod watch and tells when a pod first runs
// and when it is gone.
type watcher struct {
	mu   sync.Mutex
	pods map[string]*watched
	err  error
}

type watched struct {
	running, gone     chan struct{}
	runningAt, goneAt time.Time
}

func newWatcher(ctx context.Context, c *localapi.Client) *watcher {
	w := &watcher{pods: map[string]*watched{}}
	opened := make(chan struct{})
	var once sync.Once
	go func() {
		for ctx.Err() == nil {
			err := c.WatchPods(ctx, func(ev localapi.PodEvent) error {
				once.Do(func() { close(opened) })
				w.seen(ev, time.Now())
				return nil
			})
			if err != nil && ctx.Err() == nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	select {
	case <-opened:
	case <-time.After(2 * time.Second): // no pod yet sends no event
	}
	return w
}

// expect registers name before it is applied.
func (w *watcher) expect(name string) *watched {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := &watched{running: make(chan struct{}), gone: make(chan struct{})}
	w.pods[name] = p
	return p
}

func (w *watcher) seen(ev localapi.PodEvent, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pods[ev.Summary.Name]
	if p == nil || ev.Summary.Namespace != namespace {
		return
	}
	switch {
	case ev.Type == localapi.Deleted:
		if p.goneAt.IsZero() {
			p.goneAt = now
			close(p.gone)
		}
	case p.runningAt.IsZero() && hostproc.PodRunning(ev.Pod):
		p.runningAt = now
		close(p.running)
	}
}

func (w *watcher) wait(ctx context.Context, ch <-chan struct{}, limit time.Duration, what string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(limit):
		w.mu.Lock()
		defer w.mu.Unlock()
		return fmt.Errorf("%s: not within %s (watch error: %v)", what, limit, w.err)
	}
}

// runPods applies every pod at once and waits for all to run; it returns
// apply → Running of each.
func runPods(ctx context.Context, o options, h *host, w *watcher, pods map[string][]byte) (map[string]time.Duration, error) {
	started := map[string]time.Time{}
	ws := map[string]*watched{}
	for name, body := range pods {
		ws[name] = w.expect(name)
		started[name] = time.Now()
		if _, err := h.Client.Apply(ctx, body); err != nil {
			return nil, fmt.Errorf("apply %s: %w", name, err)
		}
	}
	out := map[string]time.Duration{}
	for name, p := range ws {
		if err := w.wait(ctx, p.running, o.timeout, name+" Running"); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, h.LogTail(20))
		}
		out[name] = p.runningAt.Sub(started[name])
	}
	return out, nil
}

// deletePods deletes the pods and waits until each is gone.
func deletePods(ctx context.Context, o options, h *host, w *watcher, names []string) error {
	zero := int64(0)
	for _, n := range names {
		w.mu.Lock()
		p := w.pods[n]
		w.mu.Unlock()
		if _, err := h.Client.Delete(ctx, namespace, n, localapi.DeleteOptions{GracePeriod: &zero}); err != nil {
			return fmt.Errorf("delete %s: %w", n, err)
		}
		if err := w.wait(ctx, p.gone, o.timeout, n+" gone"); err != nil {
			return err
		}
	}
	return nil
}

// waitDetached waits until no loop device holds an image of the volumes
// named: the host has unstaged them.
func waitDetached(ctx context.Context, o options, d *driver, names ...string) error {
	attached := func() []string {
		var held []string
		files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, n := range names {
				if strings.TrimSpace(string(b)) == filepath.Join(d.stateDir, volumeID(n)+".img") {
					held = append(held, n)
				}
			}
		}
		return held
	}
	if err := waitFor(ctx, o.timeout, func() bool { return len(attached()) == 0 }, d.exited); err != nil {
		return fmt.Errorf("volumes still staged %v: %w", attached(), err)
	}
	return nil
}

// startRounds are the durations of the start rounds.
type startRounds struct {
	plain, volume, driver []time.Duration
}

// measureStarts runs the rounds: a plain pod, a pod with a fresh CSI
// volume, and the driver's stage + publish of another fresh volume.
func measureStarts(ctx context.Context, o options, h *host, w *watcher, d *driver) (*startRounds, error) {
	conn, err := grpc.NewClient("unix://"+d.endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	node := csi.NewNodeClient(conn)
	r := &startRounds{}
	for i := range o.rounds {
		plain := fmt.Sprintf("plain-%d", i)
		ds, err := runPods(ctx, o, h, w, map[string][]byte{plain: pod(plain)})
		if err != nil {
			return nil, err
		}
		r.plain = append(r.plain, ds[plain])
		if err := deletePods(ctx, o, h, w, []string{plain}); err != nil {
			return nil, err
		}

		withVolume, claim := fmt.Sprintf("volume-%d", i), fmt.Sprintf("start-%d", i)
		if ds, err = runPods(ctx, o, h, w, map[string][]byte{withVolume: pod(withVolume, claim)}); err != nil {
			return nil, err
		}
		r.volume = append(r.volume, ds[withVolume])
		if err := deletePods(ctx, o, h, w, []string{withVolume}); err != nil {
			return nil, err
		}
		if err := waitDetached(ctx, o, d, claim); err != nil {
			return nil, err
		}

		took, err := stageAndPublish(ctx, node, d, fmt.Sprintf("direct-%d", i))
		if err != nil {
			return nil, err
		}
		r.driver = append(r.driver, took)
		fmt.Fprintf(os.Stderr, "volstart: round %d: plain %s, volume %s, driver %s\n", i, ms(r.plain[i]), ms(r.volume[i]), ms(took))
	}
	return r, nil
}

// stageAndPublish stages and publishes the volume named on the driver as
// volume-csi would (the staging dir made first, the target's parent
// there), times the two calls, and undoes them.
func stageAndPublish(ctx context.Context, node csi.NodeClient, d *driver, name string) (time.Duration, error) {
	id := volumeID(name)
	staging := filepath.Join(d.dir, "direct", name, "globalmount")
	target := filepath.Join(d.dir, "direct", name, "pod", "mount")
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return 0, err
	}
	capability := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "ext4"}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	began := time.Now()
	if _, err := node.NodeStageVolume(cctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: capability}); err != nil {
		return 0, fmt.Errorf("NodeStageVolume %s: %w", name, err)
	}
	if _, err := node.NodePublishVolume(cctx, &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: capability}); err != nil {
		return 0, fmt.Errorf("NodePublishVolume %s: %w", name, err)
	}
	took := time.Since(began)
	if _, err := node.NodeUnpublishVolume(cctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		return 0, fmt.Errorf("NodeUnpublishVolume %s: %w", name, err)
	}
	if _, err := node.NodeUnstageVolume(cctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
		return 0, fmt.Errorf("NodeUnstageVolume %s: %w", name, err)
	}
	return took, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
