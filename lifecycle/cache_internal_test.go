package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"
)

// keptCache is the cache without pruning: every entry stays until it is
// overwritten. Pruning must not change a single answer of it.
type keptCache struct {
	pods      map[types.UID]cacheEntry
	timestamp time.Time
}

func (k *keptCache) getNewerThan(uid types.UID, t time.Time) (*PodStatus, error, bool) {
	e, ok := k.pods[uid]
	if (ok && e.modified.After(t)) || k.timestamp.After(t) {
		if !ok {
			return &PodStatus{ID: uid}, nil, true
		}
		return e.status, e.err, true
	}
	return nil, nil, false
}

// TestCachePruningChangesNoAnswer runs random writes through the cache, as
// the PLEG makes them (inspections with a status, a gone pod or an error,
// listings that miss pods, time advances, with the clock moving forward),
// beside a cache that never drops an entry, and checks after every write
// that GetNewerThan and Get answer alike for every pod and every time:
// served or not, and the same containers, sandbox, IPs and error. So
// pruning never hands out a record older than a change (issue 24).
func TestCachePruningChangesNoAnswer(t *testing.T) {
	uids := []types.UID{"a", "b", "c"}
	failed := errors.New("inspection failed")
	rapid.Check(t, func(rt *rapid.T) {
		c := NewCache()
		kept := &keptCache{pods: map[types.UID]cacheEntry{}}
		now := time.Unix(100, 0)
		done, cancel := context.WithCancel(context.Background())
		cancel()
		for range rapid.IntRange(1, 40).Draw(rt, "steps") {
			now = now.Add(time.Duration(rapid.IntRange(0, 2).Draw(rt, "step")) * time.Second)
			uid := rapid.SampledFrom(uids).Draw(rt, "uid")
			switch op := rapid.SampledFrom([]string{"running", "gone", "sandbox", "error", "relist", "time"}).Draw(rt, "op"); op {
			case "running", "gone", "sandbox", "error":
				st := &PodStatus{ID: uid, Name: "p"}
				var err error
				switch op {
				case "running":
					st.ContainerStatuses = []ContainerStatus{{ID: "c", Name: "c", State: ContainerRunning}}
				case "sandbox":
					st.SandboxReady, st.IPs = true, []string{"10.0.0.1"}
				case "error":
					st, err = nil, failed
				}
				c.Set(uid, st, err, now)
				kept.pods[uid] = cacheEntry{status: st, err: err, modified: now}
			case "relist":
				// A listing taken at now that shows only some pods.
				present := map[types.UID]*RunningPod{}
				for _, u := range uids {
					if rapid.Bool().Draw(rt, "listed "+string(u)) {
						present[u] = &RunningPod{ID: u}
					}
				}
				c.forgetAbsent(present, now)
				for u, e := range kept.pods {
					if _, ok := present[u]; !ok && e.err == nil && !e.modified.After(now) {
						kept.pods[u] = cacheEntry{status: &PodStatus{ID: u}, modified: now}
					}
				}
				c.UpdateTime(now)
				if now.After(kept.timestamp) {
					kept.timestamp = now
				}
			case "time":
				c.UpdateTime(now)
				if now.After(kept.timestamp) {
					kept.timestamp = now
				}
			}
			for _, u := range uids {
				for t := time.Unix(99, 0); !t.After(now); t = t.Add(500 * time.Millisecond) {
					got, gotErr := c.GetNewerThan(done, u, t)
					served := !errors.Is(gotErr, context.Canceled)
					want, wantErr, wantServed := kept.getNewerThan(u, t)
					if served != wantServed {
						rt.Fatalf("GetNewerThan(%s, %s) served %t; without pruning %t", u, t.Format(time.TimeOnly), served, wantServed)
					}
					if served && !sameStatus(got, gotErr, want, wantErr) {
						rt.Fatalf("GetNewerThan(%s, %s) = %+v, %v; without pruning %+v, %v", u, t.Format(time.TimeOnly), got, gotErr, want, wantErr)
					}
				}
				got, gotErr := c.Get(u)
				want, wantErr := &PodStatus{ID: u}, error(nil)
				if e, ok := kept.pods[u]; ok {
					want, wantErr = e.status, e.err
				}
				if !sameStatus(got, gotErr, want, wantErr) {
					rt.Fatalf("Get(%s) = %+v, %v; without pruning %+v, %v", u, got, gotErr, want, wantErr)
				}
			}
		}
		if n := len(c.pods); n > len(uids) {
			rt.Fatalf("%d entries", n)
		}
	})
}

// sameStatus compares what a status says of the runtime; the pod's name
// is only what the PLEG asked for.
func sameStatus(a *PodStatus, aErr error, b *PodStatus, bErr error) bool {
	if aErr != nil || bErr != nil {
		return errors.Is(aErr, bErr) && errors.Is(bErr, aErr)
	}
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	return a.ID == b.ID && a.SandboxReady == b.SandboxReady && len(a.IPs) == len(b.IPs) &&
		len(a.ContainerStatuses) == len(b.ContainerStatuses)
}
