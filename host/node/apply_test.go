package node

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/lifecycle"
)

func podUIDs(d *desiredSet) []types.UID {
	pods, _ := d.Pods()
	var out []types.UID
	for _, p := range pods {
		out = append(out, p.UID)
	}
	return out
}

// TestApplyChangesDesiredSetWhenConsumed checks that a config change is
// not visible to housekeeping (desiredSet.Pods) before the sync loop has
// taken its updates: in between, a new pod would look unknown to the
// workers (a spurious create) and a removed one an orphan.
func TestApplyChangesDesiredSetWhenConsumed(t *testing.T) {
	store, err := state.Open(filepath.Join(t.TempDir(), state.FileName), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n := &Node{
		log: hclog.NewNullLogger(), clock: lifecycle.SystemClock{}, store: store,
		events: events.New(events.Options{}), desired: newDesiredSet(),
		// Buffered: apply returns before the sync loop consumes, which
		// is the window housekeeping may run in.
		updates: make(chan lifecycle.ConfigChange, 2),
	}
	n.apply(t.Context(), desired(true, pod("1", "a")))
	if got := podUIDs(n.desired); len(got) != 0 || n.desired.SourcesReady() {
		t.Fatalf("before the sync loop took the change: desired %v, ready %t; want the old (empty, not ready) set", got, n.desired.SourcesReady())
	}
	n.apply(t.Context(), desired(true, pod("2", "a")))
	first, second := <-n.updates, <-n.updates
	if len(first.Updates) != 1 || first.Updates[0].UpdateType != lifecycle.UpdateCreate {
		t.Fatalf("first change %+v; want create 1", first.Updates)
	}
	first.Commit()
	if got := podUIDs(n.desired); len(got) != 1 || got[0] != "1" || !n.desired.SourcesReady() {
		t.Fatalf("after the first change was taken: desired %v; want [1]", got)
	}
	second.Commit()
	if got := podUIDs(n.desired); len(got) != 1 || got[0] != "2" {
		t.Fatalf("after the second change was taken: desired %v; want [2]", got)
	}
}

// TestTrackFallsBackPodByPod checks that the new pods of one change are
// recorded even when one of them cannot be: the single commit fails, and
// each is then tried on its own (without it, none was stored).
func TestTrackFallsBackPodByPod(t *testing.T) {
	store, err := state.Open(filepath.Join(t.TempDir(), state.FileName), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n := &Node{log: hclog.NewNullLogger(), store: store}
	bad := pod("x", "a")
	bad.UID = ""
	var updates []lifecycle.UpdatePodOptions
	for _, p := range []*v1.Pod{pod("1", "a"), bad, pod("2", "a")} {
		updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: p})
	}
	updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod("3", "a")})
	n.track(t.Context(), updates)
	for _, name := range []string{"p1", "p2"} {
		if _, err := store.Get(t.Context(), "default", name); err != nil {
			t.Errorf("%s: %v; want it recorded", name, err)
		}
	}
	if _, err := store.Get(t.Context(), "default", "p3"); err == nil {
		t.Errorf("p3, only killed, was recorded")
	}
}
