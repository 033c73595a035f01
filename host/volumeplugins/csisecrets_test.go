package volumeplugins

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
)

// TestCSINodeSecrets: the Secrets a PersistentVolume's CSI source names
// are read for the pod whose volume it is and their data are the
// secrets of NodeStage (the stage ref) and NodePublish and the block
// publish (the publish ref); a Secret that cannot be read fails the call
// before the plugin is asked, transient, naming the Secret as the
// kubelet's message does and never a value.
func TestCSINodeSecrets(t *testing.T) {
	root := t.TempDir()
	cl := &contextClient{}
	secrets := map[string]*v1.Secret{
		"ns1/stage":   {Data: map[string][]byte{"k": []byte("stage-value")}},
		"ns2/publish": {Data: map[string][]byte{"user": []byte("u"), "pw": []byte("publish-value")}},
	}
	var asked []string
	read := func(_ context.Context, pod types.UID, namespace, name string) (*v1.Secret, error) {
		asked = append(asked, string(pod)+" "+namespace+"/"+name)
		if s, ok := secrets[namespace+"/"+name]; ok {
			return s, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": cl}, routes: map[string]string{"loop": "csi"}, secret: read}
	v := volumemanager.Volume{ID: "kubernetes.io/csi/loop^h1", Plugin: volumemanager.PluginCSI, Shared: true, PV: "pv1", ForPod: "u1",
		CSI: &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "h1",
			NodeStageSecretRef: &v1.SecretReference{Namespace: "ns1", Name: "stage"}, NodePublishSecretRef: &v1.SecretReference{Namespace: "ns2", Name: "publish"}}}
	ctx := t.Context()
	if err := c.Stage(ctx, v); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(ctx, volumemanager.PodVolume{Pod: "u2", Name: "data", Volume: v}); err != nil {
		t.Fatal(err)
	}
	v.Block = true
	if err := c.Map(ctx, volumemanager.PodVolume{Pod: "u3", Name: "raw", Volume: v}); err != nil {
		t.Fatal(err)
	}
	want := "stage map[] secrets=map[k:stage-value],publish map[] secrets=map[pw:publish-value user:u],map map[] secrets=map[pw:publish-value user:u]"
	if got := strings.Join(cl.calls, ","); got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
	if want := []string{"u1 ns1/stage", "u2 ns2/publish", "u3 ns2/publish"}; !slices.Equal(asked, want) {
		t.Errorf("secrets read %q, want %q", asked, want)
	}

	maps.DeleteFunc(secrets, func(string, *v1.Secret) bool { return true })
	cl.calls = nil
	v.Block = false
	for _, step := range []struct {
		name string
		do   func() error
		want string
	}{
		{"stage", func() error { return c.Stage(ctx, v) }, `fetching NodeStageSecretRef ns1/stage failed: secrets "stage" not found`},
		{"publish", func() error {
			return c.Publish(ctx, volumemanager.PodVolume{Pod: "u2", Name: "data", Volume: v})
		}, `fetching NodePublishSecretRef ns2/publish failed: secrets "publish" not found`},
	} {
		err := step.do()
		if err == nil || err.Error() != step.want || Classify(fmt.Errorf("wrapped: %w", err)) != volumemanager.Transient {
			t.Errorf("%s without its Secret: %v (%v); want transient %q", step.name, err, Classify(err), step.want)
		}
	}
	if len(cl.calls) != 0 {
		t.Errorf("plugin calls without the Secrets: %q; want none", cl.calls)
	}

	c.secret = nil
	if err := c.Stage(ctx, v); err == nil || !strings.Contains(err.Error(), "reads no Secrets") {
		t.Errorf("stage on a host without a secret reader: %v", err)
	}
	v.CSI.NodeStageSecretRef, v.CSI.NodePublishSecretRef = nil, nil
	if err := c.Stage(ctx, v); err != nil {
		t.Errorf("stage without secret references on a host without a reader: %v", err)
	}
}
