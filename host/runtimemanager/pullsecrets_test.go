package runtimemanager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// pullSecretObjects serves Secrets of namespace default by name.
type pullSecretObjects map[string]*v1.Secret

func (p pullSecretObjects) ConfigMap(context.Context, string, string) (*v1.ConfigMap, error) {
	return nil, errors.New("unused")
}

func (p pullSecretObjects) Secret(_ context.Context, ns, name string) (*v1.Secret, error) {
	if s, ok := p[name]; ok && ns == "default" {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (p pullSecretObjects) Services(context.Context, string) ([]v1.Service, error) { return nil, nil }

func dockerConfigSecret(doc string) *v1.Secret {
	return &v1.Secret{Type: v1.SecretTypeDockerConfigJson, Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(doc)}}
}

// TestImagePullSecrets: the credentials of the pod's pull secrets whose key
// matches the image reach EnsureImage; a missing Secret is the kubelet's
// warning only after a failed pull; an unreadable one fails the pull with
// a message naming it, without calling the runtime.
func TestImagePullSecrets(t *testing.T) {
	e := newEnv(t)
	rec := &recorded{}
	objs := pullSecretObjects{
		"creds":  dockerConfigSecret(`{"auths": {"registry.example.com": {"username": "u", "password": "p"}, "other.example.com": {"username": "x", "password": "y"}}}`),
		"opaque": {Type: v1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("z")}},
		"broken": dockerConfigSecret(`{"auths": [`),
	}
	m, err := New(Options{Runtime: e.client, Clock: e.clock, LogRoot: e.root, Reasons: e.reasons, Recorder: rec,
		EnvObjects: func(*v1.Pod) EnvObjects { return objs }})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	lastAuth := func() []*runtimev1.RegistryAuth {
		var auth []*runtimev1.RegistryAuth
		for _, c := range e.fake.Calls() {
			if r, ok := c.Req.(*runtimev1.EnsureImageRequest); ok {
				auth = r.GetAuth()
			}
		}
		return auth
	}

	pod := newPod("private", "app")
	pod.Spec.Containers[0].Image = "registry.example.com/team/app:v1"
	pod.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "missing"}, {Name: ""}, {Name: "opaque"}, {Name: "creds"}}
	e.mustSync(pod)
	if a := lastAuth(); len(a) != 1 || a[0].GetUsername() != "u" || a[0].GetPassword() != "p" {
		t.Errorf("auth sent %v; want u/p only", a)
	}
	if got := rec.take(); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, EventFailedToRetrieveImagePullSecret) }) {
		t.Errorf("events %q; want no %s after a pull that succeeded", got, EventFailedToRetrieveImagePullSecret)
	}

	failing := newPod("failing", "app")
	failing.Spec.Containers[0].Image = "registry.podhost.invalid/app:v1"
	failing.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "missing"}, {Name: "creds"}}
	if err := e.sync(failing); !errors.Is(err, ErrImagePull) {
		t.Fatalf("sync: %v; want ErrImagePull", err)
	}
	if a := lastAuth(); len(a) != 0 {
		t.Errorf("auth sent %v; want none (no key matches)", a)
	}
	want := "Warning FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (missing); attempting to pull the image may not succeed."
	if got := rec.take(); !slices.Contains(got, want) {
		t.Errorf("events %q; want %q", got, want)
	}

	broken := newPod("broken", "app")
	broken.Spec.Containers[0].Image = "registry.example.com/app:v1"
	broken.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "broken"}}
	before := e.count("EnsureImage")
	if err := e.sync(broken); !errors.Is(err, ErrImagePull) {
		t.Fatalf("sync: %v; want ErrImagePull", err)
	}
	if e.count("EnsureImage") != before {
		t.Error("EnsureImage called with an unreadable pull secret")
	}
	if r, ok := e.reasons.Get(broken.UID, "app"); !ok || r.Reason != ReasonErrImagePull || !strings.Contains(r.Message, "image pull secret default/broken key .dockerconfigjson") {
		t.Errorf("reason %+v; want ErrImagePull naming default/broken and its key", r)
	}
}
