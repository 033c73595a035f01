package node

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/sources"
)

// TestStaticObjects: the sources' ConfigMaps and Secrets are read by
// namespace/name, a missing one is the API server's NotFound with its
// message, and a new desired set replaces the old one.
func TestStaticObjects(t *testing.T) {
	var o staticObjects
	d := sources.Desired{
		ConfigMaps: []sources.ConfigMap{{ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}, Data: map[string]string{"k": "v"}}}},
		Secrets:    []sources.Secret{{Secret: &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "s"}, Data: map[string][]byte{"p": []byte("x")}}}},
	}
	if !o.set(d) {
		t.Error("first set: not changed")
	}
	if o.set(d) {
		t.Error("same objects again: changed")
	}
	if cm, err := o.ConfigMap(t.Context(), "default", "cfg"); err != nil || cm.Data["k"] != "v" {
		t.Errorf("ConfigMap default/cfg = %v, %v", cm, err)
	}
	if s, err := o.Secret(t.Context(), "prod", "s"); err != nil || string(s.Data["p"]) != "x" {
		t.Errorf("Secret prod/s = %v, %v", s, err)
	}
	if _, err := o.ConfigMap(t.Context(), "prod", "cfg"); !apierrors.IsNotFound(err) || err.Error() != `configmaps "cfg" not found` {
		t.Errorf("ConfigMap in another namespace: %v; want NotFound", err)
	}
	if _, err := o.Secret(t.Context(), "default", "s"); !apierrors.IsNotFound(err) || err.Error() != `secrets "s" not found` {
		t.Errorf("Secret in another namespace: %v; want NotFound", err)
	}
	if got := o.SecretInfo(); len(got) != 1 || got[0].Name != "s" || strings.Join(got[0].Keys, ",") != "p" || got[0].Type != "" {
		t.Errorf("SecretInfo = %+v; want prod/s with key p", got)
	}
	if got := o.ConfigMapInfo(); len(got) != 1 || got[0].Name != "cfg" || strings.Join(got[0].Keys, ",") != "k" {
		t.Errorf("ConfigMapInfo = %+v; want default/cfg with key k", got)
	}
	if !o.set(sources.Desired{}) {
		t.Error("objects gone: not changed")
	}
	if _, err := o.ConfigMap(t.Context(), "default", "cfg"); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap after it left the sources: %v; want NotFound", err)
	}
}

// TestPodObjectsRoute: a pod of the API server reads the API server's
// objects, any other pod the sources' (a static pod in Kubernetes mode
// too), and a pod no longer desired reads nothing.
func TestPodObjectsRoute(t *testing.T) {
	var local staticObjects
	local.set(sources.Desired{ConfigMaps: []sources.ConfigMap{{ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}, Data: map[string]string{"from": "sources"}}}}})
	api := apiVolumeClient{fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}, Data: map[string]string{"from": "apiserver"}})}
	origins := map[types.UID]string{"api": sources.SourceAPIServer, "file": sources.SourceFile, "local": sources.SourceAPI}
	origin := func(pod *v1.Pod) (sources.Origin, bool) {
		s, ok := origins[pod.UID]
		return sources.Origin{Source: s}, ok
	}
	kube := podObjects{local: localReader{staticObjects: &local}, api: &api, apiEnv: runtimemanager.LastGood(api), origin: origin}
	standalone := podObjects{local: localReader{staticObjects: &local}, origin: origin}
	tests := []struct {
		objs podObjects
		uid  types.UID
		want string // the value of key "from", or the error's start
	}{
		{kube, "api", "apiserver"},
		{kube, "file", "sources"},
		{kube, "local", "sources"},
		{standalone, "file", "sources"},
		{standalone, "api", "pod default/p is the API server's and the node has no API server client"},
		{kube, "gone", "pod default/p (gone) is not desired"},
	}
	for _, tt := range tests {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: tt.uid}}
		for name, r := range map[string]interface {
			ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
		}{"env": tt.objs.env(pod), "volumes": tt.objs.volumes(pod)} {
			got := ""
			cm, err := r.ConfigMap(t.Context(), "default", "cfg")
			if err != nil {
				got = err.Error()
			} else {
				got = cm.Data["from"]
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("pod %s, %s: got %q, want %q", tt.uid, name, got, tt.want)
			}
		}
	}
	if _, err := standalone.volumes(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "file"}}).CreateToken(t.Context(), "default", "default", nil); err != errNoToken {
		t.Errorf("token for a pod of the sources: %v; want %v", err, errNoToken)
	}
}
