package runtimemanager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// TestServiceLinks: the kubelet's service variables. A pod gets those of
// the services of its namespace (with enableServiceLinks, the default)
// and always those of default/kubernetes; a headless service gives none;
// a service of the pod's namespace named kubernetes wins; the container's
// own variables win over them and may refer to them; a node without an
// API server gives none.
func TestServiceLinks(t *testing.T) {
	svc := func(ns, name, ip string, ports ...v1.ServicePort) v1.Service {
		s := v1.Service{Spec: v1.ServiceSpec{ClusterIP: ip, Ports: ports}}
		s.Namespace, s.Name = ns, name
		return s
	}
	api := &apiObjects{services: []v1.Service{
		svc("default", "kubernetes", "10.96.0.1", v1.ServicePort{Name: "https", Port: 443, Protocol: v1.ProtocolTCP}),
		svc("default", "other", "10.96.0.9", v1.ServicePort{Port: 80}),
		svc("shop", "web-front", "10.96.3.4", v1.ServicePort{Name: "http", Port: 80}, v1.ServicePort{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP}),
		svc("shop", "headless", v1.ClusterIPNone, v1.ServicePort{Port: 80}),
	}}
	pod := newPod("p", "app")
	pod.Namespace = "shop"
	c := &pod.Spec.Containers[0]
	c.Env = []v1.EnvVar{{Name: "URL", Value: "http://$(WEB_FRONT_SERVICE_HOST):$(WEB_FRONT_SERVICE_PORT)"}, {Name: "KUBERNETES_PORT", Value: "mine"}}
	env := func(pod *v1.Pod, src EnvObjects) map[string]string {
		t.Helper()
		got, err := containerEnv(pod, c, envInputs{}, newEnvObjects(t.Context(), src, pod.Namespace))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, kv := range got {
			out[kv.GetKey()] = kv.GetValue()
		}
		return out
	}
	got := env(pod, api)
	want := map[string]string{
		"URL": "http://10.96.3.4:80", "KUBERNETES_PORT": "mine",
		"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1",
		"WEB_FRONT_SERVICE_HOST": "10.96.3.4", "WEB_FRONT_SERVICE_PORT": "80",
		"WEB_FRONT_SERVICE_PORT_HTTP": "80", "WEB_FRONT_SERVICE_PORT_DNS": "53", "WEB_FRONT_PORT": "tcp://10.96.3.4:80",
		"WEB_FRONT_PORT_80_TCP": "tcp://10.96.3.4:80", "WEB_FRONT_PORT_80_TCP_PROTO": "tcp", "WEB_FRONT_PORT_80_TCP_PORT": "80", "WEB_FRONT_PORT_80_TCP_ADDR": "10.96.3.4",
		"WEB_FRONT_PORT_53_UDP": "udp://10.96.3.4:53", "WEB_FRONT_PORT_53_UDP_PROTO": "udp", "WEB_FRONT_PORT_53_UDP_PORT": "53", "WEB_FRONT_PORT_53_UDP_ADDR": "10.96.3.4",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q; want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s=%q (default/other and the headless service give none)", k, got[k])
		}
	}
	if !slices.Equal(api.lists, []string{"default", "shop"}) {
		t.Errorf("listed the services of %v; want default and shop", api.lists)
	}

	off := false
	pod.Spec.EnableServiceLinks = &off
	got = env(pod, api)
	if got["WEB_FRONT_SERVICE_HOST"] != "" || got["KUBERNETES_SERVICE_HOST"] != "10.96.0.1" {
		t.Errorf("enableServiceLinks false: %v; want the master service's variables alone", got)
	}

	api.services = append(api.services, svc("shop", "kubernetes", "10.96.7.7", v1.ServicePort{Port: 8443}))
	pod.Spec.EnableServiceLinks = nil
	if got := env(pod, api); got["KUBERNETES_SERVICE_HOST"] != "10.96.7.7" {
		t.Errorf("the pod's namespace's kubernetes service: KUBERNETES_SERVICE_HOST=%q; want 10.96.7.7", got["KUBERNETES_SERVICE_HOST"])
	}

	for k := range env(pod, nil) {
		if strings.Contains(k, "SERVICE") {
			t.Errorf("a node without an API server gave %s", k)
		}
	}
}

// failingServices lists services until fail is set.
type failingServices struct {
	*apiObjects
	fail bool
}

func (f *failingServices) Services(ctx context.Context, ns string) ([]v1.Service, error) {
	if f.fail {
		return nil, errors.New("connection refused")
	}
	return f.apiObjects.Services(ctx, ns)
}

// TestServiceLinksOutliveAnAPIOutage: once a namespace's services were
// listed, a failed listing uses them, so containers are still created
// while the API server is out of reach; before any listing the error
// stands and names what was listed.
func TestServiceLinksOutliveAnAPIOutage(t *testing.T) {
	src := &failingServices{apiObjects: &apiObjects{services: []v1.Service{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec:       v1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []v1.ServicePort{{Port: 443}}},
	}}}}
	m, err := New(Options{Runtime: runtimev1.NewRuntimeClient(nil), Clock: lifecycletest.NewFakeClock(epoch), LogRoot: t.TempDir(), EnvObjects: src})
	if err != nil {
		t.Fatal(err)
	}
	pod := newPod("p", "app")
	pod.Namespace = "default"
	read := func() (string, error) {
		env, err := containerEnv(pod, &pod.Spec.Containers[0], envInputs{}, newEnvObjects(t.Context(), m.opts.EnvObjects, "default"))
		for _, kv := range env {
			if kv.GetKey() == "KUBERNETES_SERVICE_HOST" {
				return kv.GetValue(), err
			}
		}
		return "", err
	}
	src.fail = true
	if _, err := read(); err == nil || !strings.Contains(err.Error(), "listing the services of namespace default") {
		t.Errorf("no listing yet, the API server out of reach: %v; want the error", err)
	}
	src.fail = false
	if got, err := read(); err != nil || got != "10.96.0.1" {
		t.Fatalf("listing: %q, %v", got, err)
	}
	src.fail = true
	if got, err := read(); err != nil || got != "10.96.0.1" {
		t.Errorf("during an outage: %q, %v; want the last listing's 10.96.0.1", got, err)
	}
}
