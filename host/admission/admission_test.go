package admission

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pod(name string, mutate ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func requests(cpu, mem string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		rl := v1.ResourceList{}
		if cpu != "" {
			rl[v1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			rl[v1.ResourceMemory] = resource.MustParse(mem)
		}
		p.Spec.Containers[0].Resources.Requests = rl
	}
}

func hostPortOn(port int32) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
}

var node = Node{
	Name:   "n1",
	Labels: map[string]string{"kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux", "disk": "ssd"},
	Taints: []v1.Taint{{Key: "maintenance", Value: "soon", Effect: v1.TaintEffectNoSchedule}},
	Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi"), v1.ResourcePods: resource.MustParse("3"),
	},
}

func TestAdmit(t *testing.T) {
	unknown := Lookups{
		RuntimeClass: func(name string) error {
			if name == "runc" {
				return nil
			}
			return ErrUnknown
		},
		Volume: func(_ *v1.Pod, vol v1.Volume) error {
			if vol.ISCSI != nil {
				return errors.New("no volume plugin serves iscsi volumes")
			}
			return nil
		},
	}
	busy := []*v1.Pod{pod("a", requests("1500m", "512Mi"), hostPortOn(8080)), pod("b")}
	tests := []struct {
		name       string
		node       Node
		active     []*v1.Pod
		pod        *v1.Pod
		wantReason string // "" admits
		wantInMsg  string
	}{
		{"a plain pod", node, busy, pod("new"), "", ""},
		{"another node's pod", node, nil, pod("x", func(p *v1.Pod) { p.Spec.NodeName = "n2" }), ReasonNodeName, `"n2"`},
		{"windows pod", node, nil, pod("x", func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: "windows"} }), ReasonOSNotSupported, "windows"},
		{"matching nodeSelector", node, nil, pod("x", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }), "", ""},
		{"nodeSelector that does not match", node, nil, pod("x", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "hdd"} }), ReasonNodeAffinity, "nodeSelector"},
		{"required affinity that does not match", node, nil, pod("x", func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gpu", Operator: v1.NodeSelectorOpExists}}}},
			}}}
		}), ReasonNodeAffinity, "affinity"},
		{"NoSchedule taint is the scheduler's", node, nil, pod("x"), "", ""},
		{"NoExecute taint untolerated", Node{Name: "n1", Taints: []v1.Taint{{Key: "dead", Effect: v1.TaintEffectNoExecute}}}, nil, pod("x"), ReasonTaint, "dead"},
		{"NoExecute taint tolerated", Node{Name: "n1", Taints: []v1.Taint{{Key: "dead", Effect: v1.TaintEffectNoExecute}}}, nil, pod("x", func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "dead", Operator: v1.TolerationOpExists}}
		}), "", ""},
		{"host port taken", node, busy, pod("x", hostPortOn(8080)), ReasonNodePorts, "default/a"},
		{"host port free", node, busy, pod("x", hostPortOn(8081)), "", ""},
		{"cpu fits exactly", node, busy, pod("x", requests("500m", "")), "", ""},
		{"cpu over", node, busy, pod("x", requests("600m", "")), "OutOfcpu", "requests 600m"},
		{"memory over", node, busy, pod("x", requests("", "600Mi")), "OutOfmemory", "512Mi of 1Gi"},
		{"pods over", node, []*v1.Pod{pod("a"), pod("b"), pod("c")}, pod("x"), "OutOfpods", "allows 3"},
		{"the pod itself among the active is not counted twice", node, []*v1.Pod{pod("a"), pod("b"), pod("x", requests("2", ""))}, pod("x", requests("2", "")), "", ""},
		{"init container requests count", node, busy, pod("x", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}
		}), "OutOfcpu", "requests 1"},
		{"unlisted resource is not limited", node, nil, pod("x", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{"example.com/foo": resource.MustParse("3")}
		}), "", ""},
		{"known runtime class", node, nil, pod("x", func(p *v1.Pod) { rc := "runc"; p.Spec.RuntimeClassName = &rc }), "", ""},
		{"unknown runtime class", node, nil, pod("x", func(p *v1.Pod) { rc := "kata"; p.Spec.RuntimeClassName = &rc }), ReasonUnknownRuntimeClass, `"kata"`},
		{"volume no plugin serves", node, nil, pod("x", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "ok", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
				{Name: "lun", VolumeSource: v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{}}}}
		}), ReasonVolume, "spec.volumes[1] (lun): no volume plugin serves iscsi volumes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Admit(tt.node, tt.active, tt.pod, unknown)
			if tt.wantReason == "" {
				if !r.Admit {
					t.Fatalf("rejected (%s: %s); want admitted", r.Reason, r.Message)
				}
				return
			}
			if r.Admit || r.Reason != tt.wantReason || !strings.Contains(r.Message, tt.wantInMsg) {
				t.Fatalf("got %+v; want rejected with reason %s and a message containing %q", r, tt.wantReason, tt.wantInMsg)
			}
		})
	}
}

func TestNilLookupsAdmit(t *testing.T) {
	p := pod("x", func(p *v1.Pod) { rc := "kata"; p.Spec.RuntimeClassName = &rc })
	if r := Admit(Node{Name: "n1"}, nil, p, Lookups{}); !r.Admit {
		t.Fatalf("nil lookups: %+v; want admitted", r)
	}
}

func TestRejectedStatus(t *testing.T) {
	st := RejectedStatus(Result{Reason: "OutOfcpu", Message: "not enough cpu"})
	if st.Phase != v1.PodFailed || st.Reason != "OutOfcpu" || st.Message != "Pod was rejected: not enough cpu" {
		t.Fatalf("%+v", st)
	}
}
