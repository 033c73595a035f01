package apivolumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// fakeClient serves config maps from a map and issues numbered tokens
// that live ttl from the clock's now.
type fakeClient struct {
	mu       sync.Mutex
	clock    *lifecycletest.FakeClock
	ttl      time.Duration
	cms      map[string]*v1.ConfigMap
	requests []string
}

func (c *fakeClient) ConfigMap(_ context.Context, ns, name string) (*v1.ConfigMap, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cm, ok := c.cms[ns+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (c *fakeClient) Secret(context.Context, string, string) (*v1.Secret, error) {
	return nil, errors.New("no secrets here")
}

func (c *fakeClient) CreateToken(_ context.Context, ns, sa string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ref := req.Spec.BoundObjectRef
	c.requests = append(c.requests, fmt.Sprintf("%s/%s aud=%v exp=%d bound=%s/%s/%s", ns, sa, req.Spec.Audiences, *req.Spec.ExpirationSeconds, ref.Kind, ref.Name, ref.UID))
	out := req.DeepCopy()
	out.Status.Token = fmt.Sprintf("token-%d", len(c.requests))
	out.Status.ExpirationTimestamp = metav1.NewTime(c.clock.Now().Add(c.ttl))
	return out, nil
}

// kubeAPIAccess is the volume the ServiceAccount admission plugin adds.
// every reads every pod's objects with c; nil when c is.
func every(c Client) func(*v1.Pod) Client {
	if c == nil {
		return nil
	}
	return func(*v1.Pod) Client { return c }
}

func kubeAPIAccess() *v1.ProjectedVolumeSource {
	exp := int64(3607)
	mode := int32(0o644)
	return &v1.ProjectedVolumeSource{DefaultMode: &mode, Sources: []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}},
		{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}
}

func readVolume(t *testing.T, dir string) string {
	t.Helper()
	var parts []string
	for _, name := range []string{"token", "ca.crt", "namespace"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, name+"="+string(b))
	}
	return strings.Join(parts, " ")
}

// TestKickRefreshes: a kick makes Run re-read a configMap at once, the
// clock standing still (the period never ends).
func TestKickRefreshes(t *testing.T) {
	clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
	c := &fakeClient{clock: clock, cms: map[string]*v1.ConfigMap{"default/cfg": {Data: map[string]string{"k": "one"}}}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"}}
	root := t.TempDir()
	vols := New(Config{Root: root, Client: every(c), Clock: clock, Pod: func(uid types.UID) (*v1.Pod, bool) { return pod, uid == pod.UID }})
	src := &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}}
	pv := volumemanager.PodVolume{Pod: "u1", Name: "cfg", Volume: volumemanager.Volume{Plugin: volumemanager.PluginConfigMap, Projected: src}}
	if err := vols.Publish(t.Context(), pv); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pods", "u1", "volumes", "kubernetes.io~configmap", "cfg")
	read := func() string {
		b, err := os.ReadFile(filepath.Join(dir, "k"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(); got != "one" {
		t.Fatalf("published k=%s, want one", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { vols.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	c.mu.Lock()
	c.cms["default/cfg"].Data["k"] = "two"
	c.mu.Unlock()
	vols.Kick()
	for read() != "two" {
		runtime.Gosched()
	}
}

// TestRefresh drives the refresh under a fake clock: the token is renewed
// once 80 % of its lifetime has passed (or after 24 h), the config map
// is re-read at every refresh, and nothing is refreshed after Unpublish.
func TestRefresh(t *testing.T) {
	tests := []struct {
		name string
		ttl  time.Duration
		// steps: advance the clock, change ca.crt to ca (when not empty),
		// refresh, and expect the files and the number of token requests.
		steps []struct {
			advance  time.Duration
			ca       string
			want     string
			requests int
		}
	}{
		{"an hour's token is renewed at 48 minutes", time.Hour, []struct {
			advance  time.Duration
			ca       string
			want     string
			requests int
		}{
			{0, "", "token=token-1 ca.crt=ca-1 namespace=default", 1},
			{47 * time.Minute, "ca-2", "token=token-1 ca.crt=ca-2 namespace=default", 1},
			{time.Minute, "", "token=token-2 ca.crt=ca-2 namespace=default", 2},
			{47 * time.Minute, "", "token=token-2 ca.crt=ca-2 namespace=default", 2},
			{time.Minute, "", "token=token-3 ca.crt=ca-2 namespace=default", 3},
		}},
		{"a week's token is renewed after 24 hours", 7 * 24 * time.Hour, []struct {
			advance  time.Duration
			ca       string
			want     string
			requests int
		}{
			{0, "", "token=token-1 ca.crt=ca-1 namespace=default", 1},
			{24*time.Hour - time.Second, "", "token=token-1 ca.crt=ca-1 namespace=default", 1},
			{time.Second, "", "token=token-2 ca.crt=ca-1 namespace=default", 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
			c := &fakeClient{clock: clock, ttl: tt.ttl, cms: map[string]*v1.ConfigMap{
				"default/kube-root-ca.crt": {Data: map[string]string{"ca.crt": "ca-1"}}}}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"}, Spec: v1.PodSpec{ServiceAccountName: "default"}}
			root := t.TempDir()
			vols := New(Config{Root: root, Client: every(c), Clock: clock, Pod: func(uid types.UID) (*v1.Pod, bool) { return pod, uid == pod.UID }})
			pv := volumemanager.PodVolume{Pod: "u1", Name: "kube-api-access-x", Volume: volumemanager.Volume{Plugin: volumemanager.PluginProjected, Projected: kubeAPIAccess()}}
			if err := vols.Publish(t.Context(), pv); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "pods", "u1", "volumes", "kubernetes.io~projected", "kube-api-access-x")
			for i, st := range tt.steps {
				clock.Step(st.advance)
				if st.ca != "" {
					c.mu.Lock()
					c.cms["default/kube-root-ca.crt"].Data["ca.crt"] = st.ca
					c.mu.Unlock()
				}
				if i > 0 {
					vols.Refresh(t.Context())
				}
				if got := readVolume(t, dir); got != st.want {
					t.Errorf("step %d: %s, want %s", i, got, st.want)
				}
				if len(c.requests) != st.requests {
					t.Errorf("step %d: %d token requests, want %d", i, len(c.requests), st.requests)
				}
			}
			if want := "default/default aud=[] exp=3607 bound=Pod/web/u1"; c.requests[0] != want {
				t.Errorf("token request %q, want %q", c.requests[0], want)
			}
			if err := vols.Unpublish(t.Context(), pv); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("volume directory after Unpublish: %v", err)
			}
			n := len(c.requests)
			clock.Step(30 * 24 * time.Hour)
			vols.Refresh(t.Context())
			if len(c.requests) != n {
				t.Errorf("a token was requested after Unpublish")
			}
		})
	}
}

func TestPublishErrors(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"}}
	clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
	lookup := func(types.UID) (*v1.Pod, bool) { return pod, true }
	cm := func(optional bool) *v1.ProjectedVolumeSource {
		return &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: &optional}}}}
	}
	tests := []struct {
		name    string
		client  Client
		src     *v1.ProjectedVolumeSource
		wantErr string
	}{
		{"standalone", nil, kubeAPIAccess(), `volume "v" (kubernetes.io/projected) needs the API server, and this host has none`},
		{"missing config map", &fakeClient{clock: clock}, cm(false), `volume "v": sources[0].configMap: configmap default/absent`},
		{"optional config map", &fakeClient{clock: clock}, cm(true), ""},
		{"resource field without allocatable", &fakeClient{clock: clock}, &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{
			Items: []v1.DownwardAPIVolumeFile{{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu"}}}}}}}, "sources[0].downwardAPI.items[0]: resourceFieldRef: the node's allocatable resources are not known"},
		{"standalone downward API", nil, &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{
			Items: []v1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}}}, ""},
		{"escaping path", nil, &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{
			Items: []v1.DownwardAPIVolumeFile{{Path: "a/../../x", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}}}, `file path "../x": must not start with ".."`},
		{"unsupported field", nil, &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{
			Items: []v1.DownwardAPIVolumeFile{{Path: "n", FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}}}}, `fieldRef.fieldPath "spec.nodeName" is not supported in a volume`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vols := New(Config{Root: t.TempDir(), Client: every(tt.client), Clock: clock, Pod: lookup})
			err := vols.Publish(t.Context(), volumemanager.PodVolume{Pod: "u1", Name: "v", Volume: volumemanager.Volume{Plugin: volumemanager.PluginProjected, Projected: tt.src}})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err %v; want %q", err, tt.wantErr)
			}
		})
	}
}
