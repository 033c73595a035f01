package runtimemanager

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"testing/synctest"

	"google.golang.org/protobuf/proto"

	"github.com/podhost/podhost/host/runtimemanager/runtimetestfake"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// A static pod re-added with the same UID while the removal of its old
// incarnation runs: the removal must not take the new incarnation's log
// directory, objects or back-off with it. The removal is held inside its
// first RemoveContainer while the new incarnation syncs; synctest.Wait
// lets the new SyncPod run as far as it can before the removal goes on.
func TestRemovePodSparesNewIncarnationOfSameUID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clock := lifecycletest.NewFakeClock(epoch)
		fake := runtimetestfake.New(clock.Now)
		root := t.TempDir()
		m, err := New(Options{Runtime: runtimetestfake.Direct(fake), Clock: clock, LogRoot: root})
		if err != nil {
			t.Fatal(err)
		}
		pod := withPolicy(newPod("static", "app"), "OnFailure")

		// The old incarnation crashed once (a back-off entry), then finished.
		if err := m.SyncPod(ctx, pod, nil); err != nil {
			t.Fatal(err)
		}
		exitNewest(t, fake, "app", 1)
		if err := m.SyncPod(ctx, pod, nil); !errors.Is(err, ErrCrashLoopBackOff) {
			t.Fatalf("sync after a crash: got %v; want ErrCrashLoopBackOff", err)
		}
		if err := m.KillPod(ctx, pod, nil, 1); err != nil {
			t.Fatal(err)
		}

		held, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		fake.Before = func(_ context.Context, method string, _ proto.Message) error {
			if method == "RemoveContainer" {
				once.Do(func() { close(held); <-release })
			}
			return nil
		}
		var wg sync.WaitGroup
		var removeErr, syncErr error
		wg.Go(func() { removeErr = m.RemovePod(ctx, pod.UID) })
		<-held
		// The new incarnation, same UID, crashes at once.
		wg.Go(func() { syncErr = m.SyncPod(ctx, pod, nil) })
		synctest.Wait()
		close(release)
		wg.Wait()
		if removeErr != nil && !errors.Is(removeErr, ErrPodRunning) {
			t.Errorf("RemovePod of the old incarnation: %v", removeErr)
		}
		if syncErr != nil {
			t.Fatalf("SyncPod of the new incarnation: %v", syncErr)
		}

		st, err := m.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatal(err)
		}
		c := st.Container("app")
		if !st.SandboxReady || c == nil || c.State != lifecycle.ContainerRunning {
			t.Fatalf("new incarnation after the old one's removal: %+v; want a ready sandbox and app running", st)
		}
		if _, err := os.Stat(PodLogDir(root, pod.Namespace, pod.Name, pod.UID)); err != nil {
			t.Errorf("log directory of the new incarnation: %v", err)
		}
		exitNewest(t, fake, "app", 1)
		if err := m.SyncPod(ctx, pod, nil); !errors.Is(err, ErrCrashLoopBackOff) {
			t.Errorf("new incarnation's first crash: got %v; want ErrCrashLoopBackOff (its back-off kept)", err)
		}
	})
}

// exitNewest makes the newest container of the name exit with code.
func exitNewest(t *testing.T, fake *runtimetestfake.Fake, name string, code int32) {
	t.Helper()
	cs := fake.Containers()
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].GetMetadata().GetName() == name {
			fake.ExitContainer(cs[i].GetId(), code)
			return
		}
	}
	t.Fatalf("no container %q", name)
}
