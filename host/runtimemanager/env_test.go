package runtimemanager

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podhost/podhost/host/downwardapi"
)

// TestEnvDownwardAPI resolves the upstream Downward API env specs'
// variables: pod fields, the node's and the pod's IPs, and resources,
// a limit the container does not set being the node's allocatable.
func TestEnvDownwardAPI(t *testing.T) {
	pod := newPod("dapi", "app")
	pod.Spec.NodeName = "node-a"
	c := &pod.Spec.Containers[0]
	c.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1250m")},
	}
	field := func(path string) *v1.EnvVarSource {
		return &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
	}
	res := func(r string) *v1.EnvVarSource {
		return &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: r}}
	}
	c.Env = []v1.EnvVar{
		{Name: "POD_NAME", ValueFrom: field("metadata.name")},
		{Name: "POD_UID", ValueFrom: field("metadata.uid")},
		{Name: "NODE", ValueFrom: field("spec.nodeName")},
		{Name: "POD_IP", ValueFrom: field("status.podIP")},
		{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
		{Name: "HOST_IPS", ValueFrom: field("status.hostIPs")},
		{Name: "CPU_LIMIT", ValueFrom: res("limits.cpu")},
		{Name: "MEMORY_LIMIT", ValueFrom: res("limits.memory")},
		{Name: "CPU_REQUEST", ValueFrom: res("requests.cpu")},
		{Name: "MEMORY_REQUEST", ValueFrom: res("requests.memory")},
		{Name: "BOTH", Value: "$(POD_NAME)@$(HOST_IP)"},
	}
	in := envInputs{
		addrs: downwardapi.Addresses{PodIPs: []string{"10.1.0.7"}, HostIPs: []string{"192.168.5.1", "fd00::1"}},
		allocatable: func() (v1.ResourceList, error) {
			return v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}, nil
		},
	}
	kvs, err := containerEnv(pod, c, in, newEnvObjects(t.Context(), nil, "default"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range kvs {
		got = append(got, kv.GetKey()+"="+kv.GetValue())
	}
	want := []string{"POD_NAME=dapi", "POD_UID=uid-dapi", "NODE=node-a", "POD_IP=10.1.0.7", "HOST_IP=192.168.5.1",
		"HOST_IPS=192.168.5.1,fd00::1", "CPU_LIMIT=2", "MEMORY_LIMIT=1073741824", "CPU_REQUEST=1",
		"MEMORY_REQUEST=33554432", "BOTH=dapi@192.168.5.1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("env\n got %v\nwant %v", got, want)
	}

	in.allocatable = func() (v1.ResourceList, error) { return nil, errors.New("no measure") }
	if _, err := containerEnv(pod, c, in, newEnvObjects(t.Context(), nil, "default")); !errors.Is(err, ErrContainerConfig) || !strings.Contains(err.Error(), `env "CPU_LIMIT": resourceFieldRef: the node's allocatable resources: no measure`) {
		t.Errorf("allocatable failing: err %v; want ErrContainerConfig naming CPU_LIMIT", err)
	}
}
