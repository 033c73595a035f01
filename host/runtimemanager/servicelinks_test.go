package runtimemanager

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
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
