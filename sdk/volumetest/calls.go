package volumetest

import (
	"errors"
	"io/fs"
	"os"

	"google.golang.org/grpc/codes"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/internal/kitcheck"
)

// wantCode fails the check unless err has the code want.
func (k *kit) wantCode(call string, err error, want codes.Code) bool {
	k.Helper()
	return kitcheck.WantCode(k.T, call, err, want)
}

// mustOK stops the check unless err is nil.
func (k *kit) mustOK(call string, err error) {
	k.Helper()
	if uid := os.Geteuid(); err != nil && uid != 0 {
		k.Fatalf("%s: got %v; want OK (the kit runs as uid %d: a plugin that mounts needs root)", call, err, uid)
	}
	kitcheck.MustOK(k.T, call, err)
}

// published is a volume taken through every step the plugin needs.
type published struct {
	vol        Volume
	pubContext map[string]string
	staging    string // empty when the plugin does not stage
	target     string
	readonly   bool
}

func (k *kit) capability(v Volume) *volumev1.Capability {
	if v.Capability != nil {
		return v.Capability
	}
	return &volumev1.Capability{
		AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{}},
		AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER,
	}
}

// attach attaches v when the plugin requires it and returns the publish
// context for the later steps.
func (k *kit) attach(v Volume) map[string]string {
	k.Helper()
	if !k.caps.GetRequiresAttach() {
		return nil
	}
	resp, err := k.vol.Attach(k.ctx(), k.attachReq(v))
	k.mustOK("Attach", err)
	return resp.GetPublishContext()
}

func (k *kit) attachReq(v Volume) *volumev1.AttachRequest {
	return &volumev1.AttachRequest{VolumeId: v.ID, NodeId: "volumetest-node", VolumeContext: v.Context, Secrets: v.Secrets}
}

func (k *kit) detachReq(v Volume) *volumev1.DetachRequest {
	return &volumev1.DetachRequest{VolumeId: v.ID, NodeId: "volumetest-node", VolumeContext: v.Context}
}

func (k *kit) stageReq(v Volume, pubContext map[string]string, staging string) *volumev1.StageRequest {
	return &volumev1.StageRequest{VolumeId: v.ID, PublishContext: pubContext, StagingPath: staging, Capability: k.capability(v), Secrets: v.Secrets, VolumeContext: v.Context}
}

func (k *kit) publishReq(p *published) *volumev1.PublishRequest {
	return &volumev1.PublishRequest{VolumeId: p.vol.ID, PublishContext: p.pubContext, StagingPath: p.staging, TargetPath: p.target, Readonly: p.readonly, Capability: k.capability(p.vol), Secrets: p.vol.Secrets, VolumeContext: p.vol.Context}
}

// stage attaches and stages a new volume, as far as the plugin needs.
func (k *kit) stage() *published {
	k.Helper()
	v := k.setup.NewVolume(k.T)
	p := &published{vol: v, pubContext: k.attach(v), target: k.targetPath()}
	if k.caps.GetStageUnstage() {
		p.staging = k.stagingPath()
		_, err := k.vol.Stage(k.ctx(), k.stageReq(v, p.pubContext, p.staging))
		k.mustOK("Stage", err)
	}
	return p
}

// publish sets up a new volume through every step and checks that its
// target path is a directory.
func (k *kit) publish() *published {
	k.Helper()
	p := k.stage()
	_, err := k.vol.Publish(k.ctx(), k.publishReq(p))
	k.mustOK("Publish", err)
	if fi, err := os.Stat(p.target); err != nil || !fi.IsDir() {
		k.Errorf("after Publish, target path %s: got %v; want a directory", p.target, describe(fi, err))
	}
	return p
}

// unpublish undoes Publish and checks that the target path is gone.
func (k *kit) unpublish(p *published) {
	k.Helper()
	_, err := k.vol.Unpublish(k.ctx(), &volumev1.UnpublishRequest{VolumeId: p.vol.ID, TargetPath: p.target})
	k.mustOK("Unpublish", err)
	k.wantAbsent("after Unpublish, target path", p.target)
}

// tearDown undoes publish and checks that the target path is gone and
// nothing is left mounted on the staging path.
func (k *kit) tearDown(p *published) {
	k.Helper()
	k.unpublish(p)
	if k.caps.GetStageUnstage() {
		_, err := k.vol.Unstage(k.ctx(), &volumev1.UnstageRequest{VolumeId: p.vol.ID, StagingPath: p.staging})
		k.mustOK("Unstage", err)
		k.wantUnmounted("after Unstage, staging path", p.staging)
		k.wantStagingDir(p.staging)
	}
	if k.caps.GetRequiresAttach() {
		_, err := k.vol.Detach(k.ctx(), k.detachReq(p.vol))
		k.mustOK("Detach", err)
	}
}

// wantAbsent fails the check when path exists.
func (k *kit) wantAbsent(what, path string) {
	k.Helper()
	if fi, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		k.Errorf("%s %s: got %v; want it absent", what, path, describe(fi, err))
	}
}

// wantStagingDir fails the check unless the staging directory the kit
// created is still there after Unstage.
func (k *kit) wantStagingDir(path string) {
	k.Helper()
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		k.Errorf("after Unstage, staging path %s: got %v; want the directory kept: Unstage must not remove the staging directory, which the host created and removes", path, describe(fi, err))
	}
}

// wantUnmounted fails the check when anything is mounted at path or below.
func (k *kit) wantUnmounted(what, path string) {
	k.Helper()
	left, err := mountsUnder(path)
	if err != nil {
		k.Errorf("listing mounts under %s: %v", path, err)
	} else if len(left) > 0 {
		k.Errorf("%s %s: got mounts on %v; want nothing mounted", what, path, left)
	}
}

func describe(fi fs.FileInfo, err error) string {
	if err != nil {
		return err.Error()
	}
	return "an entry of mode " + fi.Mode().String()
}
