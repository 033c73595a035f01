package node

import (
	"context"
	"math/rand/v2"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/manifest"
)

// jitter spreads pod re-syncs: a duration in [d, d+d*factor).
func jitter(d time.Duration, factor float64) time.Duration {
	if factor <= 0 {
		return d
	}
	return d + time.Duration(rand.Float64()*factor*float64(d))
}

// nodeResolvConf reads the node's DNS for pods with dnsPolicy Default.
func nodeResolvConf(log hclog.Logger) *runtimemanager.ResolvConf {
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		log.Warn("reading the node's resolv.conf; pods with dnsPolicy Default get the runtime's DNS", "err", err)
		return nil
	}
	rc := runtimemanager.ParseResolvConf(b)
	return &rc
}

// manifestSource adapts the static pod directory to Source.
type manifestSource struct{ *manifest.Source }

func (manifestSource) Name() string { return sources.SourceFile }

func (s manifestSource) Run(ctx context.Context) error { return s.Source.Run(ctx) }

// Pod, MirrorPod and StaticPodUID make the desired set the status manager's
// lifecycle.PodLookup. podhost keeps no mirror pods.
func (d *desiredSet) Pod(uid types.UID) (*v1.Pod, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	p, ok := d.byUID[uid]
	return p, ok
}

func (d *desiredSet) MirrorPod(*v1.Pod) (*v1.Pod, bool) { return nil, false }

func (d *desiredSet) StaticPodUID(types.UID) (types.UID, bool) { return "", false }
