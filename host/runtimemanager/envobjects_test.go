package runtimemanager

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// apiObjects is an API server's ConfigMaps and Secrets of namespace
// default, counting the reads.
type apiObjects struct {
	configMaps map[string]map[string]string
	secrets    map[string]map[string][]byte
	services   []v1.Service
	reads      int      // of ConfigMaps and Secrets
	lists      []string // the namespaces whose services were listed
}

func (a *apiObjects) ConfigMap(_ context.Context, ns, name string) (*v1.ConfigMap, error) {
	a.reads++
	d, ok := a.configMaps[name]
	if !ok || ns != "default" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
	}
	return &v1.ConfigMap{Data: d}, nil
}

func (a *apiObjects) Secret(_ context.Context, ns, name string) (*v1.Secret, error) {
	a.reads++
	d, ok := a.secrets[name]
	if !ok || ns != "default" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return &v1.Secret{Data: d}, nil
}

func (a *apiObjects) Services(_ context.Context, ns string) ([]v1.Service, error) {
	a.lists = append(a.lists, ns)
	var out []v1.Service
	for _, s := range a.services {
		if s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

// TestEnvFromAPIObjects: env from ConfigMaps and Secrets as the kubelet
// makes it: envFrom first (prefixed, a later source winning), env after
// (replacing a variable of the same name, expanding references to
// envFrom's), each object read once, a missing optional object or key
// defining nothing, a missing required one keeping the container from
// being created with the kubelet's message.
func TestEnvFromAPIObjects(t *testing.T) {
	api := &apiObjects{
		configMaps: map[string]map[string]string{"cfg": {"MODE": "prod", "LEVEL": "3"}, "more": {"LEVEL": "4"}},
		secrets:    map[string]map[string][]byte{"creds": {"password": []byte("s3cret")}},
	}
	pod := newPod("env", "app")
	pod.Namespace = "default"
	c := &pod.Spec.Containers[0]
	c.EnvFrom = []v1.EnvFromSource{
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}},
		{Prefix: "S_", SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}}},
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "more"}}},
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}},
	}
	c.Env = []v1.EnvVar{
		{Name: "MODE", Value: "debug-$(LEVEL)"},
		{Name: "PW", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
		{Name: "FROM_CM", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "LEVEL"}}},
		{Name: "OPT_KEY", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "nope", Optional: ptr(true)}}},
		{Name: "OPT_OBJ", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Key: "k", Optional: ptr(true)}}},
	}
	env, err := containerEnv(pod, c, envInputs{}, newEnvObjects(t.Context(), api, "default"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range env {
		got = append(got, kv.GetKey()+"="+kv.GetValue())
	}
	want := "LEVEL=4 MODE=debug-4 S_password=s3cret PW=s3cret FROM_CM=3"
	if strings.Join(got, " ") != want {
		t.Errorf("env %v; want %s", got, want)
	}
	if api.reads != 5 { // cfg, creds, more, absent, gone: each once
		t.Errorf("%d reads; want 5, one per object", api.reads)
	}

	for _, tc := range []struct {
		name string
		env  v1.EnvVar
		want string
	}{
		{"missing key", v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "nope"}}},
			"couldn't find key nope in ConfigMap default/cfg"},
		{"missing secret key", v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "nope"}}},
			"couldn't find key nope in Secret default/creds"},
		{"missing object", v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Key: "k"}}},
			`secrets "gone" not found`},
	} {
		c := v1.Container{Name: "app", Env: []v1.EnvVar{tc.env}}
		_, err := containerEnv(pod, &c, envInputs{}, newEnvObjects(t.Context(), api, "default"))
		if !errors.Is(err, ErrContainerConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want a container config error with %q", tc.name, err, tc.want)
		}
	}
	c2 := v1.Container{Name: "app", EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}}}
	if _, err := containerEnv(pod, &c2, envInputs{}, newEnvObjects(t.Context(), api, "default")); !errors.Is(err, ErrContainerConfig) || !strings.Contains(err.Error(), `configmaps "absent" not found`) {
		t.Errorf("required envFrom ConfigMap missing: %v", err)
	}
	if _, err := containerEnv(pod, &c2, envInputs{}, newEnvObjects(t.Context(), nil, "default")); !errors.Is(err, ErrContainerConfig) || !strings.Contains(err.Error(), "nowhere to read it from") {
		t.Errorf("nowhere to read from: %v", err)
	}
}

// failingAPI answers until fail is set, then every read fails as an API
// server out of reach does.
type failingAPI struct {
	*apiObjects
	fail bool
}

var errUnreachable = errors.New("dial tcp 10.0.0.1:6443: connection refused")

func (f *failingAPI) ConfigMap(ctx context.Context, ns, name string) (*v1.ConfigMap, error) {
	if f.fail {
		return nil, errUnreachable
	}
	return f.apiObjects.ConfigMap(ctx, ns, name)
}

func (f *failingAPI) Services(ctx context.Context, ns string) ([]v1.Service, error) {
	if f.fail {
		return nil, errUnreachable
	}
	return f.apiObjects.Services(ctx, ns)
}

// TestEnvOutlivesAnAPIOutage: once a ConfigMap and a namespace's services
// were read, a read that fails because the API server is out of reach
// answers with them, so a container is still created (or restarted)
// during an outage; before any read the error stands; a ConfigMap the API
// server says is gone is gone.
func TestEnvOutlivesAnAPIOutage(t *testing.T) {
	api := &apiObjects{
		configMaps: map[string]map[string]string{"cfg": {"MODE": "prod"}},
		services: []v1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
			Spec: v1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []v1.ServicePort{{Port: 443}}}}},
	}
	src := &failingAPI{apiObjects: api}
	objs := LastGood(src)
	pod := newPod("p", "app")
	pod.Namespace = "default"
	c := &pod.Spec.Containers[0]
	c.Env = []v1.EnvVar{{Name: "MODE", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "MODE"}}}}
	read := func() (string, error) {
		env, err := containerEnv(pod, c, envInputs{}, newEnvObjects(t.Context(), objs, "default"))
		var got []string
		for _, kv := range env {
			got = append(got, kv.GetKey()+"="+kv.GetValue())
		}
		return strings.Join(got, " "), err
	}
	src.fail = true
	if _, err := read(); !errors.Is(err, errUnreachable) {
		t.Errorf("no read yet, the API server out of reach: %v; want its error", err)
	}
	src.fail = false
	want := "MODE=prod KUBERNETES_SERVICE_HOST=10.96.0.1"
	if got, err := read(); err != nil || !strings.HasPrefix(got, want) {
		t.Fatalf("reachable: %q, %v; want %s…", got, err, want)
	}
	src.fail = true
	if got, err := read(); err != nil || !strings.HasPrefix(got, want) {
		t.Errorf("during an outage: %q, %v; want the last answers, %s…", got, err, want)
	}
	src.fail = false
	delete(api.configMaps, "cfg")
	if _, err := read(); err == nil || !strings.Contains(err.Error(), `configmaps "cfg" not found`) {
		t.Errorf("ConfigMap deleted: %v; want not found", err)
	}
	src.fail = true
	if _, err := read(); !errors.Is(err, errUnreachable) {
		t.Errorf("a deleted ConfigMap during an outage: %v; want the outage's error, not the forgotten value", err)
	}
}
