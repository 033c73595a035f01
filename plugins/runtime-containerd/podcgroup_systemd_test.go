package main

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// driverCRI answers Status with a containerd config whose default runtime
// uses the systemd cgroup driver or not, and ListPodSandbox with one
// sandbox, labelled with a pod cgroup or not. Any other call panics.
type driverCRI struct {
	criapi.RuntimeServiceClient
	systemd   bool
	sandboxQS string // the sandbox's labelPodCgroupQOS; "" none
}

func (d driverCRI) Status(context.Context, *criapi.StatusRequest, ...grpc.CallOption) (*criapi.StatusResponse, error) {
	sd := "false"
	if d.systemd {
		sd = "true"
	}
	return &criapi.StatusResponse{Info: map[string]string{"config": `{"containerd":{"defaultRuntimeName":"runc","runtimes":{"runc":{"options":{"SystemdCgroup":` + sd + `}}}}}`}}, nil
}

func (d driverCRI) ListPodSandbox(context.Context, *criapi.ListPodSandboxRequest, ...grpc.CallOption) (*criapi.ListPodSandboxResponse, error) {
	sb := &criapi.PodSandbox{Id: "sb1", Labels: map[string]string{}}
	if d.sandboxQS != "" {
		sb.Labels[labelPodCgroupQOS] = d.sandboxQS
	}
	return &criapi.ListPodSandboxResponse{Items: []*criapi.PodSandbox{sb}}, nil
}

// Under the systemd cgroup driver a sandbox whose pod cgroup is required
// (pod-level resources, overhead) is refused by name, and any other runs
// without one; its containers then get no pod cgroup as their parent even
// when the host's sandbox config has one, while under cgroupfs a sandbox
// with a pod cgroup keeps it.
func TestPodCgroupUnderTheSystemdDriver(t *testing.T) {
	r := newCRIRuntime(testLogger())
	spec := func(required bool) SandboxSpec {
		return SandboxSpec{Name: "p", Namespace: "ns", UID: "u1", PodCgroup: &PodCgroup{QOSClass: "Burstable", Required: required}}
	}
	for _, c := range []struct {
		name              string
		systemd, required bool
		wantCgroup        bool
		wantErr           bool
	}{
		{"cgroupfs", false, false, true, false},
		{"cgroupfs, required", false, true, true, false},
		{"systemd", true, false, false, false},
		{"systemd, required", true, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &backend{rt: driverCRI{systemd: c.systemd}}
			got, err := r.podCgroupUnder(t.Context(), b, spec(c.required))
			if (err != nil) != c.wantErr || (got != nil) != c.wantCgroup {
				t.Fatalf("pod cgroup %v, error %v; want a pod cgroup %v, an error %v", got, err, c.wantCgroup, c.wantErr)
			}
			if err != nil && !errors.Is(err, errInvalid) {
				t.Fatalf("refusal %v; want INVALID_ARGUMENT", err)
			}
		})
	}

	for _, c := range []struct {
		name, sandboxQOS string
		required         bool
		wantParent       string
	}{
		{"sandbox run without one", "", false, ""},
		{"sandbox run with one", "Burstable", false, "/kubepods/burstable/podu1"},
		{"required, taken as given", "", true, "/kubepods/burstable/podu1"},
	} {
		t.Run("CreateContainer: "+c.name, func(t *testing.T) {
			b := &backend{rt: driverCRI{sandboxQS: c.sandboxQOS}}
			s := spec(c.required)
			got, err := b.withPodCgroup(t.Context(), "sb1", &s)
			if err != nil {
				t.Fatal(err)
			}
			if p := cgroupParent(*got); p != c.wantParent {
				t.Fatalf("container's cgroup parent %q; want %q", p, c.wantParent)
			}
		})
	}
}
