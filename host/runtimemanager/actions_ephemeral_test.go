package runtimemanager

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// TestEphemeralContainerActions: an ephemeral container starts once in the
// ready sandbox, also while init containers run, aimed at its target's
// container there; it is neither restarted, nor killed as a stray, nor
// started in a new sandbox.
func TestEphemeralContainerActions(t *testing.T) {
	now := epoch
	long := now.Add(-time.Hour)
	ready := []sandboxInfo{{id: "s1", ready: true, createdAt: long}}
	withDebug := func(p *v1.Pod, target string) *v1.Pod {
		p.Spec.EphemeralContainers = []v1.EphemeralContainer{{TargetContainerName: target,
			EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg", Image: "busybox"}}}
		return p
	}
	app := withDebug(newPod("p", "app"), "app")
	inits := withDebug(withInits(newPod("p", "app"), "i1"), "")
	running := func(p *v1.Pod, name, sandbox string) containerInfo {
		return ctr(p, name, sandbox, lifecycle.ContainerRunning, 0, 0, now)
	}
	tests := []struct {
		name       string
		pod        *v1.Pod
		sbs        []sandboxInfo
		cs         []containerInfo
		want       string
		wantTarget string
	}{
		{name: "added to a running pod", pod: app, sbs: ready, cs: []containerInfo{running(app, "app", "s1")},
			want: "start:dbg/0", wantTarget: "app-s1-0"},
		{name: "target without a container", pod: app, sbs: ready, want: "start:dbg/0 start:app/0"},
		{name: "while an init container runs", pod: inits, sbs: ready, cs: []containerInfo{running(inits, "i1", "s1")},
			want: "start:dbg/0"},
		{name: "running: kept, not a stray", pod: app, sbs: ready, cs: []containerInfo{running(app, "app", "s1"), running(app, "dbg", "s1")}},
		{name: "exited: never restarted", pod: app, sbs: ready,
			cs: []containerInfo{running(app, "app", "s1"), ctr(app, "dbg", "s1", lifecycle.ContainerExited, 1, 0, long)}},
		{name: "not started again in a new sandbox", pod: app,
			sbs: []sandboxInfo{{id: "s2", ready: true, attempt: 1, createdAt: now}, {id: "s1", createdAt: long}},
			cs:  []containerInfo{running(app, "app", "s2"), ctr(app, "dbg", "s1", lifecycle.ContainerExited, 137, 0, long)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &podState{uid: tt.pod.UID, sandboxes: tt.sbs, containers: tt.cs}
			a := computeActions(tt.pod, st, now, nil, nil)
			if got := summary(a); got != tt.want {
				t.Errorf("computeActions = %q; want %q", got, tt.want)
			}
			for _, s := range a.start {
				if s.spec.Name != "dbg" {
					continue
				}
				if s.kind != containerTypeEphemeral || s.target != tt.pod.Spec.EphemeralContainers[0].TargetContainerName || s.targetID != tt.wantTarget {
					t.Errorf("start of dbg: kind %q target %q (%q); want ephemeral, %q (%q)", s.kind, s.target, s.targetID,
						tt.pod.Spec.EphemeralContainers[0].TargetContainerName, tt.wantTarget)
				}
			}
		})
	}
}
