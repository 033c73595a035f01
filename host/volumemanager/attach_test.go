package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// fakeAttachments says every shared volume needs attaching, and answers
// Attached from pc once attached is set; each Attached call is reported
// on asked.
type fakeAttachments struct {
	mu       sync.Mutex
	attached bool
	asked    chan VolumeID
}

func (a *fakeAttachments) AttachRequired(context.Context, *v1.Pod, Volume) (bool, error) {
	return true, nil
}

func (a *fakeAttachments) Attached(_ context.Context, v Volume) (map[string]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked <- v.ID
	if !a.attached {
		return nil, fmt.Errorf("VolumeAttachment of %s: %w", v.ID, ErrNotAttached)
	}
	return map[string]string{"lun": "3"}, nil
}

// contextPlugins records the publish context each stage and publish got.
type contextPlugins struct {
	*fakePlugins
	mu  sync.Mutex
	got []string
}

func (p *contextPlugins) Stage(ctx context.Context, v Volume) error {
	p.mu.Lock()
	p.got = append(p.got, fmt.Sprintf("stage %v", v.PublishContext))
	p.mu.Unlock()
	return p.fakePlugins.Stage(ctx, v)
}

func (p *contextPlugins) Publish(ctx context.Context, pv PodVolume) error {
	p.mu.Lock()
	p.got = append(p.got, fmt.Sprintf("publish %v", pv.Volume.PublishContext))
	p.mu.Unlock()
	return p.fakePlugins.Publish(ctx, pv)
}

// TestManagerWaitsForAttachment: a volume the cluster attaches is asked
// about only once reported in use, waits (a FailedMount event saying it is
// not attached) while it is not, and is then staged and published with
// the attachment's publish context.
func TestManagerWaitsForAttachment(t *testing.T) {
	store := &MemoryStore{}
	plugins := &contextPlugins{fakePlugins: newFakePlugins(store)}
	att := &fakeAttachments{asked: make(chan VolumeID, 10)}
	events := &recordedEvents{ch: make(chan string, 10)}
	clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
	m := NewManager(Config{Plugins: plugins, Classifier: testClassifier, Store: store, Clock: clock, Resolver: testResolver{},
		Events: events, Attachments: att})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}()
	m.MarkDesiredPopulated()
	pod := testPod("p1", "pvc:c1")
	if err := m.AddPod(testCtx(t), pod); err != nil {
		t.Fatal(err)
	}
	if pv, _ := m.DesiredVolume("p1", "c1"); !pv.Volume.Attach {
		t.Fatalf("desired volume %+v; want Attach set from Attachments", pv.Volume)
	}
	const id = VolumeID("kubernetes.io/csi/drv^c1")
	m.MarkVolumesReportedInUse(m.VolumesInUse())
	select {
	case got := <-att.asked:
		if got != id {
			t.Fatalf("asked about %s; want %s", got, id)
		}
	case <-testCtx(t).Done():
		t.Fatal("the attachment was never asked about after the volume was reported in use")
	}
	want := "p1 Warning FailedMount MountVolume.WaitForAttach failed for volume \"pv-c1\" : VolumeAttachment of " + string(id) + ": not attached to the node yet"
	select {
	case got := <-events.ch:
		if got != want {
			t.Errorf("event %q; want %q", got, want)
		}
	case <-testCtx(t).Done():
		t.Fatal("no event for the missing attachment")
	}

	att.mu.Lock()
	att.attached = true
	att.mu.Unlock()
	clock.Step(InitialBackoff)
	if err := m.WaitForAttachAndMount(testCtx(t), pod); err != nil {
		t.Fatal(err)
	}
	plugins.expectCalls(t, "stage "+string(id), "publish "+string(id)+" p1")
	plugins.mu.Lock()
	defer plugins.mu.Unlock()
	if got := fmt.Sprint(plugins.got); got != "[stage map[lun:3] publish map[lun:3]]" {
		t.Errorf("calls %s; want the stage and the publish with the publish context", got)
	}
}
