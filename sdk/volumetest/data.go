package volumetest

import (
	"context"
	"os"
	"path/filepath"

	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/sdk"
)

// dataFile is the file the kit writes through a target path.
const dataFile = "volumetest-data"

// write writes dataFile through the published target of p.
func (k *kit) write(p *published) {
	k.Helper()
	if err := os.WriteFile(filepath.Join(p.target, dataFile), []byte("podhost"), 0o600); err != nil {
		k.Fatalf("writing through target path %s: %v", p.target, err)
	}
}

// republish unpublishes p and publishes it again at a new target path.
func (k *kit) republish(p *published) {
	k.Helper()
	k.unpublish(p)
	p.target = k.targetPath()
	_, err := k.vol.Publish(k.ctx(), k.publishReq(p))
	k.mustOK("Publish at a new target path", err)
}

// wantData fails the check unless dataFile is found through p's target.
func (k *kit) wantData(p *published, why string) {
	k.Helper()
	got, err := os.ReadFile(filepath.Join(p.target, dataFile))
	if err != nil || string(got) != "podhost" {
		k.Errorf("reading %s through the new target path %s: got %q, %v; want %q, written through the first one: %s",
			dataFile, p.target, got, err, "podhost", why)
	}
}

// checkDataInVolume writes through one target path and reads the data back
// through the next: the target must show the volume, not a directory of
// its own.
func checkDataInVolume(k *kit) {
	p := k.publish()
	k.write(p)
	k.republish(p)
	k.wantData(p, "Publish must mount the volume on the target path, not make an empty directory")
	k.tearDown(p)
}

// checkReadonly publishes with readonly set and writes through the target.
func checkReadonly(k *kit) {
	p := k.publish()
	k.write(p)
	p.readonly = true
	k.republish(p)
	k.wantData(p, "a read-only target shows the volume too")
	for _, name := range []string{dataFile, "volumetest-new"} {
		if err := os.WriteFile(filepath.Join(p.target, name), []byte("written"), 0o600); err == nil {
			k.Errorf("writing %s through the read-only target path %s: got no error; want the write refused", name, p.target)
		}
	}
	k.tearDown(p)
}

// interruptions are the points at which the kit ends a call's context: at
// the plugin's Midway hook, when it has one, and after the plugin
// answered, as when the answer is lost.
func (k *kit) interruptions() []string {
	if k.setup.Midway == nil && k.setup.Plugin.Volumes == nil {
		return []string{atEnd}
	}
	return []string{atMidway, atEnd}
}

// interrupt makes call with a context the kit ends once the plugin reached
// at, waits for the plugin's handler to return, and reports what the call
// answered.
func (k *kit) interrupt(name, at string, call func(ctx context.Context) error) {
	k.Helper()
	ctx, cancel := context.WithTimeout(k.T.Context(), k.setup.CallTimeout)
	reached := k.irq.arm(at, cancel)
	err := call(ctx)
	cancel()
	select {
	case <-reached:
	default:
		k.irq.arm("", nil)
		hint := ""
		switch {
		case at != atMidway:
		case k.setup.Plugin.Volumes != nil:
			hint = "; it must call sdk.Midway(ctx) once it changed the node"
		default:
			hint = "; it must call the hook Setup.Midway points at"
		}
		k.Errorf("%s answered %v before it reached the point of interruption (%s)%s", name, err, at, hint)
	}
	if !k.irq.wait() {
		k.Fatalf("%s interrupted %s: still running %v after its context ended", name, at, k.setup.CallTimeout)
	}
	if answer, ok := k.irq.midwayAnswer(); ok {
		k.wantUncertain(name, answer)
	}
}

// wantUncertain fails the check unless answer, what the plugin's handler
// returned to a call interrupted midway, is uncertain on the wire.
func (k *kit) wantUncertain(name string, answer error) {
	k.Helper()
	const rule = "an interrupted call may have taken effect in part, so it must answer an uncertain error (CANCELLED or DEADLINE_EXCEEDED when its context ended), never a final one"
	if answer == nil {
		k.Errorf("%s interrupted midway answered OK after its context ended: %s", name, rule)
		return
	}
	st, ok := status.FromError(answer)
	if !ok {
		st = status.FromContextError(answer) // as the gRPC server sends it
	}
	if sdk.ClassifyVolumeError(st.Err()) != sdk.VolumeUncertain {
		k.Errorf("%s interrupted midway answered %v (%v), a final error: %s", name, st.Code(), st.Message(), rule)
	}
}

// checkStageInterrupted ends Stage's context midway and after it took
// effect, then requires Unpublish and Unstage to succeed and leave nothing
// mounted.
func checkStageInterrupted(k *kit) {
	for _, at := range k.interruptions() {
		v := k.setup.NewVolume(k.T)
		p := &published{vol: v, pubContext: k.attach(v), staging: k.stagingPath(), target: k.targetPath()}
		k.interrupt("Stage", at, func(ctx context.Context) error {
			_, err := k.vol.Stage(ctx, k.stageReq(v, p.pubContext, p.staging))
			return err
		})
		k.tearDown(p)
	}
}

// checkPublishInterrupted does the same with Publish of a staged volume.
func checkPublishInterrupted(k *kit) {
	for _, at := range k.interruptions() {
		p := k.stage()
		k.interrupt("Publish", at, func(ctx context.Context) error {
			_, err := k.vol.Publish(ctx, k.publishReq(p))
			return err
		})
		k.tearDown(p)
	}
}
