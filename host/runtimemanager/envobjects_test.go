package runtimemanager

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	if _, err := containerEnv(pod, &c2, envInputs{}, newEnvObjects(t.Context(), nil, "default")); !errors.Is(err, ErrContainerConfig) || !strings.Contains(err.Error(), "no API server") {
		t.Errorf("no API server: %v", err)
	}
}
