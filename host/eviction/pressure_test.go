package eviction

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const gi = 1 << 30

func signals(ts []Threshold) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Signal)
	}
	return out
}

func TestThresholdsMet(t *testing.T) {
	cases := []struct {
		name string
		obs  Observations
		met  []string
	}{
		{name: "nothing measured", obs: Observations{}},
		{name: "all fine", obs: Observations{
			SignalMemoryAvailable: {Available: 200 * mi, Capacity: gi},
			SignalNodeFsAvailable: {Available: 11, Capacity: 100}, SignalNodeFsInodesFree: {Available: 5, Capacity: 100},
			SignalImageFsAvailable: {Available: 15, Capacity: 100}}},
		{name: "memory just under 100Mi", obs: Observations{SignalMemoryAvailable: {Available: 100*mi - 1, Capacity: gi}},
			met: []string{SignalMemoryAvailable}},
		{name: "nodefs under 10%, memory listed first", obs: Observations{
			SignalNodeFsAvailable: {Available: 9, Capacity: 100}, SignalMemoryAvailable: {Available: mi, Capacity: gi}},
			met: []string{SignalMemoryAvailable, SignalNodeFsAvailable}},
		{name: "inodes under 5%, imagefs under 15%", obs: Observations{
			SignalNodeFsInodesFree: {Available: 4, Capacity: 100}, SignalImageFsAvailable: {Available: 14, Capacity: 100}},
			met: []string{SignalNodeFsInodesFree, SignalImageFsAvailable}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := signals(ThresholdsMet(DefaultThresholds(), c.obs)); !slices.Equal(got, c.met) {
				t.Errorf("met %v, want %v", got, c.met)
			}
		})
	}
}

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		signal, value string
		on            bool
		want          uint64 // against a capacity of 1000
		err           bool
	}{
		{signal: SignalMemoryAvailable, value: "100Mi", on: true, want: 100 * mi},
		{signal: SignalNodeFsAvailable, value: "12.5%", on: true, want: 125},
		{signal: SignalNodeFsInodesFree, value: "0%"},
		{signal: SignalImageFsAvailable, value: "0"},
		{signal: SignalNodeFsAvailable, value: "101%", err: true},
		{signal: SignalNodeFsAvailable, value: "-1", err: true},
		{signal: SignalNodeFsAvailable, value: "lots", err: true},
		{signal: "pid.available", value: "5%", err: true},
	} {
		th, on, err := ParseThreshold(c.signal, c.value)
		if (err != nil) != c.err || on != c.on {
			t.Errorf("%s=%s: on %v err %v", c.signal, c.value, on, err)
			continue
		}
		if on && th.quantity(1000) != c.want {
			t.Errorf("%s=%s: quantity %d, want %d", c.signal, c.value, th.quantity(1000), c.want)
		}
	}
}

func TestConditionsTransitionPeriod(t *testing.T) {
	t0 := time.Unix(1000, 0)
	seen := map[v1.NodeConditionType]time.Time{}
	mem := []Threshold{{Signal: SignalMemoryAvailable}}
	disk := []Threshold{{Signal: SignalNodeFsInodesFree}}
	steps := []struct {
		at   time.Duration
		met  []Threshold
		want []v1.NodeConditionType
	}{
		{0, nil, nil},
		{10 * time.Second, mem, []v1.NodeConditionType{v1.NodeMemoryPressure}},
		{20 * time.Second, disk, []v1.NodeConditionType{v1.NodeDiskPressure, v1.NodeMemoryPressure}},
		{5*time.Minute + 9*time.Second, nil, []v1.NodeConditionType{v1.NodeDiskPressure, v1.NodeMemoryPressure}},
		{5*time.Minute + 10*time.Second, nil, []v1.NodeConditionType{v1.NodeDiskPressure}},
		{5*time.Minute + 20*time.Second, nil, nil},
	}
	for _, s := range steps {
		if got := Conditions(s.met, seen, t0.Add(s.at), DefaultPressureTransitionPeriod); !slices.Equal(got, s.want) {
			t.Errorf("at %v: %v, want %v", s.at, got, s.want)
		}
	}
}

func pod(name string, prio int32, req v1.ResourceList, opts ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)},
		Spec: v1.PodSpec{Priority: ptr.To(prio), Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req}}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func mem(q string) v1.ResourceList { return v1.ResourceList{v1.ResourceMemory: resource.MustParse(q)} }
func eph(q string) v1.ResourceList {
	return v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse(q)}
}

func static(p *v1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.source": "file"} }

func TestDecidePressure(t *testing.T) {
	memLow := Observations{SignalMemoryAvailable: {Available: 50 * mi, Capacity: gi}}
	diskLow := Observations{SignalNodeFsAvailable: {Available: 5 * gi, Capacity: 100 * gi},
		SignalImageFsAvailable: {Available: 5 * gi, Capacity: 100 * gi}}
	cases := []struct {
		name      string
		obs       Observations
		dedicated bool
		pods      []*v1.Pod
		usage     map[string]PodUsage // absent: not measured
		want      string
		message   string
	}{
		{name: "no pressure", obs: Observations{SignalMemoryAvailable: {Available: gi, Capacity: 2 * gi}},
			pods: []*v1.Pod{pod("a", 0, nil)}, usage: map[string]PodUsage{"a": {Memory: gi}}},
		{name: "memory: over its request before a larger one within it",
			obs:  memLow,
			pods: []*v1.Pod{pod("big", 0, mem("1Gi")), pod("small", 0, mem("10Mi"))},
			usage: map[string]PodUsage{"big": {Memory: 900 * mi}, "small": {Memory: 20 * mi,
				Containers: map[string]ContainerPressureUsage{"c": {Memory: 20 * mi}}}},
			want:    "small",
			message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container c was using 20Mi, request is 10Mi, has larger consumption of memory. "},
		{name: "memory: both over requests, lower priority first",
			obs:   memLow,
			pods:  []*v1.Pod{pod("hog", 10, nil), pod("low", 1, nil)},
			usage: map[string]PodUsage{"hog": {Memory: 500 * mi}, "low": {Memory: 10 * mi}},
			want:  "low"},
		{name: "memory: same priority, larger use above request",
			obs:   memLow,
			pods:  []*v1.Pod{pod("a", 0, mem("100Mi")), pod("b", 0, mem("300Mi")), pod("c", 0, mem("10Mi"))},
			usage: map[string]PodUsage{"a": {Memory: 200 * mi}, "b": {Memory: 350 * mi}, "c": {Memory: 50 * mi}},
			want:  "a"},
		{name: "memory: a pod not measured first",
			obs:   memLow,
			pods:  []*v1.Pod{pod("a", 0, nil), pod("unknown", 100, nil)},
			usage: map[string]PodUsage{"a": {Memory: 500 * mi}},
			want:  "unknown"},
		{name: "memory: static and critical pods never",
			obs: memLow,
			pods: []*v1.Pod{pod("static", 0, nil, static), pod("critical", 2000000000, nil),
				pod("ok", 0, mem("1Gi"))},
			usage: map[string]PodUsage{"static": {Memory: gi}, "critical": {Memory: gi}, "ok": {Memory: mi}},
			want:  "ok"},
		{name: "memory: only critical pods: none",
			obs:   memLow,
			pods:  []*v1.Pod{pod("static", 0, nil, static)},
			usage: map[string]PodUsage{"static": {Memory: gi}}},
		{name: "disk: largest local storage above its request",
			obs:     diskLow,
			pods:    []*v1.Pod{pod("a", 0, eph("1Gi")), pod("b", 0, nil), pod("c", 0, nil)},
			usage:   map[string]PodUsage{"a": {Disk: 2*gi + gi/2}, "b": {Disk: 2 * gi, Layers: gi}, "c": {Disk: gi, Layers: gi}},
			want:    "b",
			message: "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 5Gi. "},
		{name: "disk: within its request after those over",
			obs:   diskLow,
			pods:  []*v1.Pod{pod("a", 0, eph("10Gi")), pod("b", 5, nil)},
			usage: map[string]PodUsage{"a": {Disk: 9 * gi}, "b": {Disk: 1}},
			want:  "b"},
		{name: "imagefs dedicated: writable layers count",
			obs:       Observations{SignalImageFsAvailable: {Available: 5 * gi, Capacity: 100 * gi}},
			dedicated: true,
			pods:      []*v1.Pod{pod("a", 0, nil), pod("b", 0, nil)},
			usage:     map[string]PodUsage{"a": {Disk: 3 * gi, Layers: 1}, "b": {Disk: 2 * gi, Layers: gi}},
			want:      "b"},
		{name: "memory before disk",
			obs: Observations{SignalNodeFsAvailable: {Available: 1, Capacity: 100 * gi},
				SignalMemoryAvailable: {Available: 50 * mi, Capacity: gi}},
			pods:  []*v1.Pod{pod("disk", 0, nil), pod("mem", 0, nil)},
			usage: map[string]PodUsage{"disk": {Disk: 50 * gi, Memory: 1}, "mem": {Memory: 500 * mi}},
			want:  "mem"},
		{name: "inodes",
			obs:     Observations{SignalNodeFsInodesFree: {Available: 100, Capacity: 10000}},
			pods:    []*v1.Pod{pod("a", 0, nil)},
			usage:   map[string]PodUsage{"a": {Disk: 1}},
			want:    "a",
			message: "The node was low on resource: inodes. Threshold quantity: 500, available: 100. "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			usage := func(p *v1.Pod) (PodUsage, bool) { u, ok := c.usage[p.Name]; return u, ok }
			met := ThresholdsMet(DefaultThresholds(), c.obs)
			p, e, ok := DecidePressure(met, c.obs, c.dedicated, c.pods, usage)
			if got := ""; ok {
				got = p.Name
				if got != c.want {
					t.Fatalf("evicts %s, want %q", got, c.want)
				}
			} else if c.want != "" {
				t.Fatalf("evicts none, want %s", c.want)
			}
			if ok && c.message != "" && e.Message != c.message {
				t.Errorf("message %q\nwant    %q", e.Message, c.message)
			}
			if ok && e.Signal != met[0].Signal {
				t.Errorf("signal %s, want %s", e.Signal, met[0].Signal)
			}
		})
	}
}

func TestPressureStatus(t *testing.T) {
	var st v1.PodStatus
	PressureStatus(&st, Eviction{Message: "m"}, time.Unix(1, 0))
	PressureStatus(&st, Eviction{Message: "m"}, time.Unix(2, 0))
	if st.Phase != v1.PodFailed || st.Reason != Reason || len(st.Conditions) != 1 ||
		st.Conditions[0].Reason != v1.PodReasonTerminationByKubelet || st.Conditions[0].Type != v1.DisruptionTarget {
		t.Errorf("status %+v", st)
	}
}
