package apivolumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
)

// DefaultPeriod is how often the volumes are rewritten from the API
// server (configMaps and secrets re-read, tokens renewed when due).
const DefaultPeriod = time.Minute

// ErrNoAPIServer is wrapped by the error of such a volume when
// Config.Client gives the pod nowhere to read from.
var ErrNoAPIServer = errors.New("needs the API server, and this host has none")

// Clock is the time the volumes go by.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Config configures Volumes.
type Config struct {
	// Root is the host's root directory.
	Root string
	// Client says where the configMaps, secrets and tokens of a pod's
	// volumes are read: the API server for its pods, the host's sources'
	// objects for the others. Nil, or a nil answer: nowhere, and a volume
	// with such a source fails (ErrNoAPIServer).
	Client func(pod *v1.Pod) Client
	// Pod returns the desired pod of a UID: the downward API items of a
	// volume are rendered from the newest pod at each refresh.
	Pod func(types.UID) (*v1.Pod, bool)
	// Allocatable returns the node's allocatable resources, which a
	// container's unset limit takes in a downward API item
	// (resourceFieldRef). Nil: such items fail the volume.
	Allocatable func() (v1.ResourceList, error)
	Clock       Clock
	// Period between refreshes; DefaultPeriod when zero.
	Period time.Duration
	Log    hclog.Logger
}

// Volumes publishes the projected, configMap and secret volumes of pods
// and keeps them fresh. Its methods are safe for concurrent use.
type Volumes struct {
	cfg Config
	mu  sync.Mutex
	// live are the published volumes by their directory.
	live map[string]*entry
	// kick wakes Run for a refresh before the period is up (Kick).
	kick chan struct{}
}

type entry struct {
	mu  sync.Mutex
	dir string
	uid types.UID // the pod's; fixed
	p   *projected
}

// New returns Volumes; call Run to keep them fresh.
func New(cfg Config) *Volumes {
	if cfg.Period == 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	return &Volumes{cfg: cfg, live: map[string]*entry{}, kick: make(chan struct{}, 1)}
}

// Serves reports whether the volumes of plugin are this package's.
func Serves(plugin string) bool {
	switch plugin {
	case volumemanager.PluginProjected, volumemanager.PluginConfigMap, volumemanager.PluginSecret, volumemanager.PluginDownwardAPI:
		return true
	}
	return false
}

// needsAPIServer reports whether a source of src reads from the API
// server: every source but the downward API's.
func needsAPIServer(src *v1.ProjectedVolumeSource) bool {
	for _, s := range src.Sources {
		if s.DownwardAPI == nil {
			return true
		}
	}
	return false
}

// client is where pod's volumes read; nil: nowhere.
func (v *Volumes) client(pod *v1.Pod) Client {
	if v.cfg.Client == nil {
		return nil
	}
	return v.cfg.Client(pod)
}

// Dir is the volume's directory, which containers mount.
func (v *Volumes) Dir(pv volumemanager.PodVolume) string {
	return hostvolumes.PodVolumeDir(v.cfg.Root, pv.Pod, pv.Volume.Plugin, pv.Name)
}

// Publish writes the volume's files and keeps them fresh until
// Unpublish. It is idempotent: a second call rewrites what changed.
func (v *Volumes) Publish(ctx context.Context, pv volumemanager.PodVolume) error {
	src := pv.Volume.Projected
	if src == nil {
		return &volumemanager.FieldError{Field: "projected", Detail: "no source"}
	}
	pod, ok := v.cfg.Pod(pv.Pod)
	if !ok {
		return fmt.Errorf("volume %q: pod %s is not desired", pv.Name, pv.Pod)
	}
	if v.client(pod) == nil && needsAPIServer(src) {
		return fmt.Errorf("volume %q (%s) %w", pv.Name, pv.Volume.Plugin, ErrNoAPIServer)
	}
	dir := v.Dir(pv)
	v.mu.Lock()
	e := v.live[dir]
	if e == nil {
		e = &entry{dir: dir, uid: pv.Pod, p: &projected{tokens: map[int]*token{}}}
		v.live[dir] = e
	}
	v.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.p.pod, e.p.volume, e.p.sources = pod, pv.Name, src.Sources
	e.p.fsGroup = pv.Args.FSGroup
	e.p.defaultMode = 0o644
	if src.DefaultMode != nil {
		e.p.defaultMode = *src.DefaultMode
	}
	return v.writeFiles(ctx, e)
}

// write rewrites e's files from the newest desired pod (its labels and
// annotations may have changed) and the API server; e.mu is held.
func (v *Volumes) write(ctx context.Context, e *entry) error {
	if pod, ok := v.cfg.Pod(e.uid); ok {
		e.p.pod = pod
	}
	return v.writeFiles(ctx, e)
}

// writeFiles rewrites e's files from e's pod; e.mu is held.
func (v *Volumes) writeFiles(ctx context.Context, e *entry) error {
	files, err := e.p.files(ctx, sources{client: v.client(e.p.pod), allocatable: v.cfg.Allocatable}, v.cfg.Clock.Now())
	if err != nil {
		return fmt.Errorf("volume %q: %w", e.p.volume, err)
	}
	if _, err := WriteAtomic(e.dir, files, e.p.fsGroup); err != nil {
		return fmt.Errorf("volume %q: writing %s: %w", e.p.volume, e.dir, err)
	}
	return nil
}

// Unpublish stops refreshing the volume and removes its directory.
// Nothing to remove is success.
func (v *Volumes) Unpublish(_ context.Context, pv volumemanager.PodVolume) error {
	dir := v.Dir(pv)
	v.mu.Lock()
	e := v.live[dir]
	delete(v.live, dir)
	v.mu.Unlock()
	if e != nil {
		e.mu.Lock() // a refresh in progress ends first
		defer e.mu.Unlock()
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing volume %q: %w", pv.Name, err)
	}
	_ = os.Remove(filepath.Dir(dir)) // the plugin's directory, once empty
	return nil
}

// Refresh rewrites every published volume now: configMaps and secrets
// re-read, tokens renewed when due. A volume that fails keeps its files
// and is tried again on the next refresh.
func (v *Volumes) Refresh(ctx context.Context) {
	v.each(func(*entry) bool { return true }, func(e *entry) {
		if err := v.write(ctx, e); err != nil {
			v.cfg.Log.Warn("refreshing a volume", "pod", e.p.pod.Namespace+"/"+e.p.pod.Name, "uid", e.uid, "volume", e.p.volume, "err", err)
		}
	})
}

// RefreshPod rewrites now the volumes of pod that hold downward API items,
// when its labels or annotations differ from those they were written
// with: the pod's sync calls it, so that a change of the pod reaches its
// files without waiting for the period, as the kubelet remounts such
// volumes on each sync. The other sources of such a volume are read again
// with it; volumes without downward API items are left to the period.
func (v *Volumes) RefreshPod(ctx context.Context, pod *v1.Pod) {
	v.each(func(e *entry) bool { return e.uid == pod.UID }, func(e *entry) {
		if !e.p.hasDownwardAPI() || sameMeta(e.p.pod, pod) {
			return
		}
		e.p.pod = pod
		if err := v.writeFiles(ctx, e); err != nil {
			v.cfg.Log.Warn("rewriting a volume for the pod's new labels or annotations", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID, "volume", e.p.volume, "err", err)
		}
	})
}

// each calls fn on every published volume that pick selects, holding
// the volume's lock, and skips those unpublished meanwhile.
func (v *Volumes) each(pick func(*entry) bool, fn func(*entry)) {
	v.mu.Lock()
	var entries []*entry
	for _, e := range v.live {
		if pick(e) {
			entries = append(entries, e)
		}
	}
	v.mu.Unlock()
	for _, e := range entries {
		e.mu.Lock()
		v.mu.Lock()
		current := v.live[e.dir] == e
		v.mu.Unlock()
		if current {
			fn(e)
		}
		e.mu.Unlock()
	}
}

// Kick makes Run refresh every volume now rather than at the end of the
// period: the host calls it when its sources' ConfigMaps or Secrets
// changed, which it knows at once, where the API server's are polled. It
// never blocks; kicks before a refresh starts are one refresh.
func (v *Volumes) Kick() {
	select {
	case v.kick <- struct{}{}:
	default:
	}
}

// Run refreshes the volumes every period, and when kicked, until ctx is
// done.
func (v *Volumes) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-v.cfg.Clock.After(v.cfg.Period):
		case <-v.kick:
		}
		v.Refresh(ctx)
	}
}
