package volumemanager

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// fakeMountTable says a pod volume is in place unless it is gone (pod/name);
// a publish puts it back.
type fakeMountTable struct {
	mu   sync.Mutex
	gone map[string]bool
}

func (f *fakeMountTable) InPlace(_ context.Context, pv PodVolume) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.gone[string(pv.Pod)+"/"+pv.Name], nil
}

func (f *fakeMountTable) set(pv PodVolume, gone bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gone[string(pv.Pod)+"/"+pv.Name] = gone
}

// publishingPlugins puts back in the table what it publishes.
type publishingPlugins struct {
	*fakePlugins
	table *fakeMountTable
}

func (p publishingPlugins) Publish(ctx context.Context, pv PodVolume) error {
	err := p.fakePlugins.Publish(ctx, pv)
	if err == nil {
		p.table.set(pv, false)
	}
	return err
}

// TestMountsCheckedAgainstTheMountTable: a publish the actual state holds
// counts only while the mount table shows it. After a reboot (records of
// another boot ID, every mount gone) and when a mount vanished under a
// running host, the volume is staged and published again before the pod's
// wait for its mounts succeeds, so that no container starts on a plain
// directory of the root disk.
func TestMountsCheckedAgainstTheMountTable(t *testing.T) {
	vol := Volume{ID: "kubernetes.io/csi/drv^c1", Plugin: PluginCSI, Shared: true, PV: "pv-c1"}
	pv := PodVolume{Pod: "p1", Name: "c1", Volume: vol}
	tests := []struct {
		name       string
		savedBoot  string
		bootID     string
		goneAtBoot bool // the table lacks the pod's mount at the restart
		goneLater  bool // it vanishes after the first wait succeeded
	}{
		{"reboot: another boot ID", "boot-1", "boot-2", true, false},
		{"mount gone over a restart, same boot", "boot-1", "boot-1", true, false},
		{"mount gone under a running host", "boot-1", "boot-1", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &MemoryStore{}
			_ = store.Save(context.Background(), []Record{{Volume: vol, Device: Mounted, Boot: tt.savedBoot,
				Pods: []PodRecord{{Pod: "p1", Name: "c1", State: Mounted}}}})
			table := &fakeMountTable{gone: map[string]bool{}}
			table.set(pv, tt.goneAtBoot)
			fp := newFakePlugins(store)
			clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
			m := NewManager(Config{Plugins: publishingPlugins{fp, table}, Classifier: testClassifier, Store: store, Clock: clock,
				Resolver: testResolver{}, Mounts: table, BootID: tt.bootID})
			if err := m.Reconstruct(testCtx(t), fixedDirs{{Pod: "p1", Plugin: PluginCSI, Name: "c1"}}, answers{}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- m.Run(ctx) }()
			defer func() { cancel(); <-done }()
			pod := testPod("p1", "pvc:c1")
			if err := m.AddPod(testCtx(t), pod); err != nil {
				t.Fatal(err)
			}
			m.MarkDesiredPopulated()
			if err := m.WaitForAttachAndMount(testCtx(t), pod); err != nil {
				t.Fatal(err)
			}
			if tt.goneLater {
				table.set(pv, true)
				errc := make(chan error, 1)
				go func() { errc <- m.WaitForAttachAndMount(testCtx(t), pod) }()
				fp.expectCalls(t, "stage kubernetes.io/csi/drv^c1") // in back-off until the clock moves
				clock.Step(InitialBackoff)
				fp.expectCalls(t, "publish kubernetes.io/csi/drv^c1 p1")
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
				return
			}
			fp.expectCalls(t, "stage kubernetes.io/csi/drv^c1", "publish kubernetes.io/csi/drv^c1 p1")
			recs, _ := store.Load(context.Background())
			if len(recs) != 1 || recs[0].Boot != tt.bootID {
				t.Errorf("records %+v, want them saved under boot %s", recs, tt.bootID)
			}
		})
	}
}
