package lifecycle_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/lifecycle"
)

func TestGeneratePodStatusPhase(t *testing.T) {
	exited := func(code int32) *lifecycle.PodStatus {
		return &lifecycle.PodStatus{ID: "1", ContainerStatuses: []lifecycle.ContainerStatus{{Name: "c1", State: lifecycle.ContainerExited, ExitCode: code}}}
	}
	tests := []struct {
		name      string
		policy    v1.RestartPolicy
		rs        *lifecycle.PodStatus
		apiPhase  v1.PodPhase
		cached    v1.PodPhase
		terminal  bool
		wantPhase v1.PodPhase
	}{
		{name: "G68 Never and exit 1 gives Failed", policy: v1.RestartPolicyNever, rs: exited(1), wantPhase: v1.PodFailed},
		{name: "G68 Never and exit 0 gives Succeeded", policy: v1.RestartPolicyNever, rs: exited(0), wantPhase: v1.PodSucceeded},
		{name: "G68 Always and stopped stays Running", policy: v1.RestartPolicyAlways, rs: exited(1), wantPhase: v1.PodRunning},
		{name: "G68 terminal pod with a failed container is Failed", policy: v1.RestartPolicyAlways, rs: exited(1), terminal: true, wantPhase: v1.PodFailed},
		{name: "G68 cached terminal phase wins over a non-terminal one", policy: v1.RestartPolicyAlways, rs: exited(1), cached: v1.PodFailed, wantPhase: v1.PodFailed},
		{name: "G68 API Failed is never turned into Succeeded (kubernetes issue 58711)", policy: v1.RestartPolicyNever, rs: exited(0), apiPhase: v1.PodFailed, wantPhase: v1.PodFailed},
		{name: "G68 nothing started yet is Pending", policy: v1.RestartPolicyAlways, rs: &lifecycle.PodStatus{ID: "1"}, wantPhase: v1.PodPending},
		{name: "G68 running container gives Running", policy: v1.RestartPolicyNever,
			rs: &lifecycle.PodStatus{ID: "1", ContainerStatuses: []lifecycle.ContainerStatus{{Name: "c1", State: lifecycle.ContainerRunning}}}, wantPhase: v1.PodRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := apiPod("1", "p")
			pod.Spec.Containers = []v1.Container{{Name: "c1"}}
			pod.Spec.RestartPolicy = tt.policy
			pod.Status.Phase = tt.apiPhase
			pod.Status.Message = "api message"
			got := lifecycle.GeneratePodStatus(pod, tt.rs, v1.PodStatus{Phase: tt.cached}, tt.terminal, nil)
			if got.Phase != tt.wantPhase {
				t.Errorf("phase %q; want %q", got.Phase, tt.wantPhase)
			}
			if tt.apiPhase != "" && got.Phase == tt.apiPhase && tt.cached == "" && got.Message != "api message" {
				t.Errorf("G68 message %q not kept with an unchanged phase", got.Message)
			}
		})
	}
}

func TestGeneratePodStatusLostContainers(t *testing.T) {
	runningBefore := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
		{Name: "c1", RestartCount: 2, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}}
	pod := func(deleting bool) *v1.Pod {
		p := apiPod("1", "p")
		p.Spec.Containers = []v1.Container{{Name: "c1"}}
		if deleting {
			ts := metav1.Now()
			p.DeletionTimestamp = &ts
		}
		return p
	}
	t.Run("G69 unknown state of a running container is terminated 137 with a restart", func(t *testing.T) {
		rs := &lifecycle.PodStatus{ID: "1", ContainerStatuses: []lifecycle.ContainerStatus{{Name: "c1", State: lifecycle.ContainerUnknown}}}
		got := lifecycle.GeneratePodStatus(pod(false), rs, runningBefore, false, nil).ContainerStatuses[0]
		if term := got.State.Terminated; term == nil || term.ExitCode != 137 || term.Reason != "ContainerStatusUnknown" || got.RestartCount != 3 {
			t.Errorf("status %+v; want Terminated(137, ContainerStatusUnknown), restarts 3", got)
		}
	})
	t.Run("G69 missing running container keeps a 137 last termination, no Pending fallback", func(t *testing.T) {
		got := lifecycle.GeneratePodStatus(pod(false), &lifecycle.PodStatus{ID: "1"}, runningBefore, false, nil)
		c := got.ContainerStatuses[0]
		if lt := c.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 137 || c.RestartCount != 3 {
			t.Errorf("status %+v; want last termination 137 and restarts 3", c)
		}
		if got.Phase == v1.PodPending {
			t.Errorf("pod fell back to Pending")
		}
	})
	t.Run("G69 no restart increment while the pod is being deleted", func(t *testing.T) {
		c := lifecycle.GeneratePodStatus(pod(true), &lifecycle.PodStatus{ID: "1"}, runningBefore, false, nil).ContainerStatuses[0]
		if c.RestartCount != 2 {
			t.Errorf("restarts %d; want 2", c.RestartCount)
		}
	})
	t.Run("G69 a never-reported container is never exit 0", func(t *testing.T) {
		got := lifecycle.GeneratePodStatus(pod(false), &lifecycle.PodStatus{ID: "1"}, v1.PodStatus{}, true, nil)
		if term := got.ContainerStatuses[0].State.Terminated; term != nil && term.ExitCode == 0 {
			t.Errorf("a container without status reported exit 0")
		}
	})
	t.Run("G69 reason cache shows the last start error and is LRU-bounded", func(t *testing.T) {
		rc := lifecycle.NewReasonCache()
		rc.Add("1", "c1", lifecycle.StartFailure{Reason: "CreateContainerError", Message: "boom"})
		rs := &lifecycle.PodStatus{ID: "1", ContainerStatuses: []lifecycle.ContainerStatus{{Name: "c1", State: lifecycle.ContainerExited, ExitCode: 1}}}
		c := lifecycle.GeneratePodStatus(pod(false), rs, v1.PodStatus{}, false, rc).ContainerStatuses[0]
		if w := c.State.Waiting; w == nil || w.Reason != "CreateContainerError" || w.Message != "boom" {
			t.Errorf("state %+v; want Waiting(CreateContainerError)", c.State)
		}
		for i := range 1000 {
			rc.Add("x", string(rune(i)), lifecycle.StartFailure{Reason: "r"})
		}
		if _, ok := rc.Get("1", "c1"); ok {
			t.Errorf("oldest entry survived 1000 newer ones")
		}
	})
}

func TestGeneratePodStatusReadiness(t *testing.T) {
	// podhost runs no probes: a running container is ready, and so is the
	// pod when all its containers run.
	pod := apiPod("1", "p")
	pod.Spec.Containers = []v1.Container{{Name: "c1"}, {Name: "c2"}}
	for _, tt := range []struct {
		name      string
		c2        lifecycle.ContainerState
		wantReady v1.ConditionStatus
	}{
		{"all running", lifecycle.ContainerRunning, v1.ConditionTrue},
		{"one exited", lifecycle.ContainerExited, v1.ConditionFalse},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := &lifecycle.PodStatus{ID: "1", ContainerStatuses: []lifecycle.ContainerStatus{
				{Name: "c1", State: lifecycle.ContainerRunning}, {Name: "c2", State: tt.c2}}}
			got := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil)
			if !got.ContainerStatuses[0].Ready || got.ContainerStatuses[0].Started == nil || !*got.ContainerStatuses[0].Started {
				t.Errorf("running container c1: ready %v started %v; want both true", got.ContainerStatuses[0].Ready, got.ContainerStatuses[0].Started)
			}
			for _, c := range got.Conditions {
				if c.Type == v1.PodReady && c.Status != tt.wantReady {
					t.Errorf("PodReady = %s; want %s", c.Status, tt.wantReady)
				}
			}
		})
	}
}

// TestGeneratePodStatusStartFailures checks when the last start failure of
// a container (the reason cache) replaces its state: a container that has
// not run yet shows it whatever the restart policy; an exited container
// shows it only while it will be restarted, which is never once the pod is
// deleted or terminal. The exit code survives TerminatePod: 137 is only for
// containers never seen (docs/lifecycle.md, section 5 (h) and (i)).
func TestGeneratePodStatusStartFailures(t *testing.T) {
	exited := func(code int32) *lifecycle.PodStatus {
		return &lifecycle.PodStatus{ID: "1", ContainerStatuses: []lifecycle.ContainerStatus{{Name: "c1", State: lifecycle.ContainerExited, ExitCode: code}}}
	}
	none := &lifecycle.PodStatus{ID: "1"}
	for _, tc := range []struct {
		name     string
		policy   v1.RestartPolicy
		deleted  bool
		terminal bool
		rs       *lifecycle.PodStatus
		reason   string
		// wantWaiting is the reason shown waiting, or "" for a terminated
		// state with wantExit.
		wantWaiting string
		wantExit    int32
	}{
		{name: "Always, exited, will restart: back-off shown", policy: v1.RestartPolicyAlways, rs: exited(1), reason: "CrashLoopBackOff", wantWaiting: "CrashLoopBackOff"},
		{name: "Always, deleted: the real exit code", policy: v1.RestartPolicyAlways, deleted: true, rs: exited(2), reason: "CrashLoopBackOff", wantExit: 2},
		{name: "OnFailure, deleted: the real exit code", policy: v1.RestartPolicyOnFailure, deleted: true, rs: exited(3), reason: "CrashLoopBackOff", wantExit: 3},
		{name: "Always, killed (terminal, not deleted): the real exit code", policy: v1.RestartPolicyAlways, terminal: true, rs: exited(2), reason: "CrashLoopBackOff", wantExit: 2},
		{name: "OnFailure, exit 0 is not restarted", policy: v1.RestartPolicyOnFailure, rs: exited(0), reason: "CrashLoopBackOff", wantExit: 0},
		{name: "Never, exited: the exit code", policy: v1.RestartPolicyNever, rs: exited(1), reason: "CrashLoopBackOff", wantExit: 1},
		{name: "Never, image missing: the start failure", policy: v1.RestartPolicyNever, rs: none, reason: "ErrImageNeverPull", wantWaiting: "ErrImageNeverPull"},
		{name: "Always, image missing: the start failure", policy: v1.RestartPolicyAlways, rs: none, reason: "ErrImageNeverPull", wantWaiting: "ErrImageNeverPull"},
		{name: "Never, image missing, no failure recorded: creating", policy: v1.RestartPolicyNever, rs: none, wantWaiting: "ContainerCreating"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := apiPod("1", "p")
			pod.Spec.Containers = []v1.Container{{Name: "c1"}}
			pod.Spec.RestartPolicy = tc.policy
			if tc.deleted {
				ts := metav1.Now()
				pod.DeletionTimestamp = &ts
			}
			rc := lifecycle.NewReasonCache()
			if tc.reason != "" {
				rc.Add("1", "c1", lifecycle.StartFailure{Reason: tc.reason, Message: "m"})
			}
			got := lifecycle.GeneratePodStatus(pod, tc.rs, v1.PodStatus{}, tc.terminal, rc)
			c := got.ContainerStatuses[0]
			switch {
			case tc.wantWaiting != "":
				if w := c.State.Waiting; w == nil || w.Reason != tc.wantWaiting {
					t.Fatalf("state %+v; want Waiting(%s)", c.State, tc.wantWaiting)
				}
				return
			case c.State.Terminated == nil || c.State.Terminated.ExitCode != tc.wantExit:
				t.Fatalf("state %+v; want Terminated(%d)", c.State, tc.wantExit)
			}
			if !tc.deleted && !tc.terminal {
				return
			}
			e := newStatusEnv()
			e.m.SetPodStatus(pod, got)
			e.m.TerminatePod(pod)
			final, _ := e.m.PodStatus("1")
			if term := final.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != tc.wantExit {
				t.Errorf("after TerminatePod %+v; want exit %d", final.ContainerStatuses[0].State, tc.wantExit)
			}
		})
	}
}

func TestSetHostIPs(t *testing.T) {
	podIPs := func(ips ...string) []v1.PodIP {
		var out []v1.PodIP
		for _, ip := range ips {
			out = append(out, v1.PodIP{IP: ip})
		}
		return out
	}
	hostIPs := func(ips ...string) []v1.HostIP {
		var out []v1.HostIP
		for _, ip := range ips {
			out = append(out, v1.HostIP{IP: ip})
		}
		return out
	}
	tests := []struct {
		name        string
		hostNetwork bool
		nodeIPs     []string
		runtimeIPs  []string
		want        v1.PodStatus
	}{
		{name: "no node address: nothing set", runtimeIPs: []string{"10.1.0.5"},
			want: v1.PodStatus{PodIP: "10.1.0.5", PodIPs: podIPs("10.1.0.5")}},
		{name: "pod network: host IPs, the runtime's pod IP", nodeIPs: []string{"192.0.2.7"}, runtimeIPs: []string{"10.1.0.5"},
			want: v1.PodStatus{HostIP: "192.0.2.7", HostIPs: hostIPs("192.0.2.7"), PodIP: "10.1.0.5", PodIPs: podIPs("10.1.0.5")}},
		{name: "pod network without an IP yet keeps none", nodeIPs: []string{"192.0.2.7"},
			want: v1.PodStatus{HostIP: "192.0.2.7", HostIPs: hostIPs("192.0.2.7")}},
		{name: "host network: the node's address is the pod's", hostNetwork: true, nodeIPs: []string{"192.0.2.7"},
			want: v1.PodStatus{HostIP: "192.0.2.7", HostIPs: hostIPs("192.0.2.7"), PodIP: "192.0.2.7", PodIPs: podIPs("192.0.2.7")}},
		{name: "host network, dual stack: both addresses, primary first", hostNetwork: true, nodeIPs: []string{"192.0.2.7", "2001:db8::7"},
			want: v1.PodStatus{HostIP: "192.0.2.7", HostIPs: hostIPs("192.0.2.7", "2001:db8::7"), PodIP: "192.0.2.7", PodIPs: podIPs("192.0.2.7", "2001:db8::7")}},
		{name: "host network with an IP from the runtime keeps it", hostNetwork: true, nodeIPs: []string{"192.0.2.7"}, runtimeIPs: []string{"192.0.2.9"},
			want: v1.PodStatus{HostIP: "192.0.2.7", HostIPs: hostIPs("192.0.2.7"), PodIP: "192.0.2.9", PodIPs: podIPs("192.0.2.9")}},
		{name: "host network without a node address gets no pod IP", hostNetwork: true, want: v1.PodStatus{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := apiPod("1", "p")
			pod.Spec.Containers = []v1.Container{{Name: "c1"}}
			pod.Spec.HostNetwork = tt.hostNetwork
			got := lifecycle.GeneratePodStatus(pod, &lifecycle.PodStatus{ID: "1", IPs: tt.runtimeIPs}, v1.PodStatus{}, false, nil)
			lifecycle.SetHostIPs(pod, &got, tt.nodeIPs)
			if got.HostIP != tt.want.HostIP || !equality.Semantic.DeepEqual(got.HostIPs, tt.want.HostIPs) ||
				got.PodIP != tt.want.PodIP || !equality.Semantic.DeepEqual(got.PodIPs, tt.want.PodIPs) {
				t.Errorf("hostIP %q hostIPs %v podIP %q podIPs %v; want %q %v %q %v", got.HostIP, got.HostIPs, got.PodIP, got.PodIPs,
					tt.want.HostIP, tt.want.HostIPs, tt.want.PodIP, tt.want.PodIPs)
			}
		})
	}
}

// TestGeneratePodStatusEphemeral: an ephemeral container's state is in
// ephemeralContainerStatuses, not among the app containers', and its exit
// does not end a pod whose app container runs.
func TestGeneratePodStatusEphemeral(t *testing.T) {
	pod := apiPod("1", "p")
	pod.Spec.Containers = []v1.Container{{Name: "app"}}
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg", Image: "busybox"}}}
	rs := &lifecycle.PodStatus{ID: "1", SandboxReady: true, ContainerStatuses: []lifecycle.ContainerStatus{
		{Name: "app", ID: "a1", State: lifecycle.ContainerRunning},
		{Name: "dbg", ID: "d1", State: lifecycle.ContainerExited, ExitCode: 3},
	}}
	got := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil)
	if len(got.EphemeralContainerStatuses) != 1 {
		t.Fatalf("ephemeralContainerStatuses %+v; want dbg's", got.EphemeralContainerStatuses)
	}
	dbg := got.EphemeralContainerStatuses[0]
	if dbg.Name != "dbg" || dbg.Image != "busybox" || dbg.ContainerID != "d1" || dbg.State.Terminated == nil || dbg.State.Terminated.ExitCode != 3 {
		t.Errorf("dbg status %+v; want terminated with 3", dbg)
	}
	if len(got.ContainerStatuses) != 1 || got.ContainerStatuses[0].Name != "app" {
		t.Errorf("containerStatuses %+v; want app's alone", got.ContainerStatuses)
	}
	if got.Phase != v1.PodRunning {
		t.Errorf("phase %s; want Running (an ephemeral container's exit ends nothing)", got.Phase)
	}
	pod.Spec.EphemeralContainers = nil
	if got := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil); got.EphemeralContainerStatuses != nil {
		t.Errorf("a pod without ephemeral containers has ephemeralContainerStatuses %+v", got.EphemeralContainerStatuses)
	}
}

// The kubelet's default waiting reason of a pod with init containers is
// PodInitializing for each container without a runtime status, init ones
// included (upstream: InitContainer should not start app containers if
// init containers fail on a RestartAlways pod).
func TestWaitingReasonWithInitContainers(t *testing.T) {
	pod := apiPod("1", "p")
	pod.Spec.InitContainers = []v1.Container{{Name: "init1"}, {Name: "init2"}}
	pod.Spec.Containers = []v1.Container{{Name: "app"}}
	rs := &lifecycle.PodStatus{ID: "1", SandboxReady: true, ContainerStatuses: []lifecycle.ContainerStatus{{ID: "i1", Name: "init1", State: lifecycle.ContainerExited, ExitCode: 1}}}
	s := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil)
	for _, c := range []v1.ContainerStatus{s.InitContainerStatuses[1], s.ContainerStatuses[0]} {
		if c.State.Waiting == nil || c.State.Waiting.Reason != "PodInitializing" {
			t.Errorf("%s: got %+v; want waiting PodInitializing", c.Name, c.State)
		}
	}
}
