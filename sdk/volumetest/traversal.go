package volumetest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// traversalRule is what a plugin that used a volume ID as a path broke.
const traversalRule = "volume IDs are untrusted input: refuse one that is not a single path element (INVALID_ARGUMENT), or never build a path from it"

// climb is how many levels a traversal volume ID climbs: more than any
// plugin's directory is deep.
const climb = 64

// traversalID returns a volume ID that, joined to any directory less than
// climb levels deep, climbs to the root and down to target, as "../../etc"
// does to /etc.
func traversalID(target string) string {
	return strings.Repeat("../", climb) + strings.TrimPrefix(filepath.Clean(target), "/")
}

// shortID is a traversal ID as messages show it.
func shortID(target string) string {
	return fmt.Sprintf(`"../" ×%d + %q`, climb, strings.TrimPrefix(filepath.Clean(target), "/"))
}

// checkTraversalID sends Stage, Publish, Unpublish and Unstage (as far as
// the plugin has them) with volume IDs that climb out of any directory to
// places the kit watches: one that does not exist, which the calls must not
// create, and one that holds a file, which the calls must neither mount
// nor remove. The calls may fail or succeed; what they answer is not
// checked, only that the IDs were not used as paths.
func checkTraversalID(k *kit) {
	missing := filepath.Join(k.dir, "escape-missing")
	canary := filepath.Join(k.dir, "escape-canary")
	if err := os.Mkdir(canary, 0o750); err != nil {
		k.Fatalf("creating %s: %v", canary, err)
	}
	canaryFile := filepath.Join(canary, "volumetest-canary")
	if err := os.WriteFile(canaryFile, []byte("podhost"), 0o600); err != nil {
		k.Fatalf("creating %s: %v", canaryFile, err)
	}
	for _, target := range []string{missing, canary} {
		v := k.setup.NewVolume(k.T)
		v.ID = traversalID(target)
		p := &published{vol: v, target: k.targetPath()}
		if k.caps.GetStageUnstage() {
			p.staging = k.stagingPath()
			_, _ = k.vol.Stage(k.ctx(), k.stageReq(v, nil, p.staging))
			k.wantNotShown("Stage", shortID(target), p.staging, canary)
		}
		_, _ = k.vol.Publish(k.ctx(), k.publishReq(p))
		k.wantNotShown("Publish", shortID(target), p.target, canary)
		_, _ = k.vol.Unpublish(k.ctx(), &volumev1.UnpublishRequest{VolumeId: v.ID, TargetPath: p.target})
		if k.caps.GetStageUnstage() {
			_, _ = k.vol.Unstage(k.ctx(), &volumev1.UnstageRequest{VolumeId: v.ID, StagingPath: p.staging})
		}
		if fi, err := os.Lstat(missing); target == missing && !errors.Is(err, fs.ErrNotExist) {
			k.Errorf("after calls with volume ID %s, %s: got %v; want it absent: the plugin used the ID as a path; %s", shortID(target), missing, describe(fi, err), traversalRule)
		}
		if _, err := os.Stat(canaryFile); target == canary && err != nil {
			k.Errorf("after calls with volume ID %s, the kit's file %s: got %v; want it kept: the plugin used the ID as a path and removed what it named; %s", shortID(target), canaryFile, err, traversalRule)
		}
	}
}

// wantNotShown fails the check when path shows the kit's directory canary:
// the plugin mounted what the volume ID named.
func (k *kit) wantNotShown(call, id, path, canary string) {
	k.Helper()
	a, errA := os.Stat(path)
	b, errB := os.Stat(canary)
	if errA == nil && errB == nil && os.SameFile(a, b) {
		k.Errorf("%s with volume ID %s mounted the kit's directory %s on %s: the plugin used the ID as a path; %s", call, id, canary, path, traversalRule)
	}
}
