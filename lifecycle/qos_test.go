package lifecycle_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podhost/podhost/lifecycle"
)

func TestPodQOS(t *testing.T) {
	rl := func(kv ...string) v1.ResourceList {
		out := v1.ResourceList{}
		for i := 0; i+1 < len(kv); i += 2 {
			out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	c := func(req, lim v1.ResourceList) v1.Container {
		return v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	for _, tc := range []struct {
		name       string
		init, main []v1.Container
		want       v1.PodQOSClass
	}{
		{"nothing set", nil, []v1.Container{c(nil, nil)}, v1.PodQOSBestEffort},
		{"only other resources", nil, []v1.Container{c(rl("ephemeral-storage", "1Gi"), nil)}, v1.PodQOSBestEffort},
		{"zero requests count as none", nil, []v1.Container{c(rl("cpu", "0"), nil)}, v1.PodQOSBestEffort},
		{"limits equal requests", nil, []v1.Container{c(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))}, v1.PodQOSGuaranteed},
		{"limits only (requests default to them)", nil, []v1.Container{c(nil, rl("cpu", "500m", "memory", "64Mi"))}, v1.PodQOSGuaranteed},
		{"request below limit", nil, []v1.Container{c(rl("cpu", "500m", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))}, v1.PodQOSBurstable},
		{"memory limit missing", nil, []v1.Container{c(nil, rl("cpu", "1"))}, v1.PodQOSBurstable},
		{"one container without limits", nil, []v1.Container{c(nil, rl("cpu", "1", "memory", "1Gi")), c(nil, nil)}, v1.PodQOSBurstable},
		{"an init container's request counts", []v1.Container{c(rl("memory", "1Mi"), nil)}, []v1.Container{c(nil, nil)}, v1.PodQOSBurstable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: tc.init, Containers: tc.main}}
			if got := lifecycle.PodQOS(pod); got != tc.want {
				t.Errorf("PodQOS = %s; want %s", got, tc.want)
			}
			if st := lifecycle.GeneratePodStatus(pod, nil, v1.PodStatus{}, false, nil); st.QOSClass != tc.want {
				t.Errorf("generated status.qosClass = %q; want %s", st.QOSClass, tc.want)
			}
		})
	}
}
