package runtimemanager

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// ctr builds a listed container: "name@sandbox state exit restarts".
func ctr(pod *v1.Pod, name, sandbox string, state lifecycle.ContainerState, exit int32, restarts uint32, finished time.Time) containerInfo {
	c := containerInfo{id: name + "-" + sandbox + "-" + string(rune('0'+restarts)), sandboxID: sandbox, name: name, state: state, exitCode: exit, restartCount: restarts,
		createdAt: finished.Add(-time.Minute), startedAt: finished.Add(-time.Minute), finishedAt: finished}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				c.hash = specHash(&list[i])
			}
		}
	}
	if state != lifecycle.ContainerExited {
		c.finishedAt = time.Time{}
	}
	return c
}

// summary renders actions compactly: "kill:… start:name/attempt … wait:…".
func summary(a actions) string {
	var parts []string
	if a.killPod {
		parts = append(parts, "killpod")
	}
	if a.createSandbox {
		parts = append(parts, "sandbox")
	}
	if a.initFailed {
		parts = append(parts, "initfailed")
	}
	for _, k := range a.kill {
		parts = append(parts, "kill:"+k.name)
	}
	for _, id := range a.remove {
		parts = append(parts, "remove:"+id)
	}
	for _, s := range a.start {
		p := "start:" + s.spec.Name + "/" + string(rune('0'+s.attempt))
		if s.existingID != "" {
			p += "(existing)"
		}
		parts = append(parts, p)
	}
	for _, w := range a.waiting {
		parts = append(parts, "wait:"+w.name+"/"+w.delay.String())
	}
	return strings.Join(parts, " ")
}

func TestComputeActions(t *testing.T) {
	now := epoch
	ready := []sandboxInfo{{id: "s1", ready: true, createdAt: now.Add(-time.Hour)}}
	dead := []sandboxInfo{{id: "s1", ready: false, createdAt: now.Add(-time.Hour)}}
	long := now.Add(-time.Hour) // finished long ago: back-off over
	app := newPod("p", "app")
	two := newPod("p", "a", "b")
	inits := withInits(newPod("p", "app"), "i1", "i2")
	never := withPolicy(newPod("p", "app"), v1.RestartPolicyNever)
	onFailure := withPolicy(newPod("p", "app"), v1.RestartPolicyOnFailure)
	initsNever := withPolicy(withInits(newPod("p", "app"), "i1"), v1.RestartPolicyNever)
	changed := newPod("p", "app")
	changed.Spec.Containers[0].Image = "other:2"

	tests := []struct {
		name string
		pod  *v1.Pod
		sbs  []sandboxInfo
		cs   func(pod *v1.Pod) []containerInfo
		prev map[string]backOffEntry
		want string
	}{
		{name: "new pod", pod: two, want: "sandbox start:a/0 start:b/0"},
		{name: "new pod with inits starts only the first", pod: inits, want: "sandbox start:i1/0"},
		{name: "all running", pod: app, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerRunning, 0, 0, now)}
		}, want: ""},
		{name: "first init running blocks", pod: inits, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "i1", "s1", lifecycle.ContainerRunning, 0, 0, now)}
		}, want: ""},
		{name: "next init after success", pod: inits, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "i1", "s1", lifecycle.ContainerExited, 0, 0, long)}
		}, want: "start:i2/0"},
		{name: "app after all inits", pod: inits, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "i2", "s1", lifecycle.ContainerExited, 0, 0, long), ctr(p, "i1", "s1", lifecycle.ContainerExited, 0, 0, long)}
		}, want: "start:app/0"},
		{name: "failed init restarts", pod: inits, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "i1", "s1", lifecycle.ContainerExited, 1, 0, long)}
		}, want: "start:i1/1"},
		{name: "failed init under Never fails the pod", pod: initsNever, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "i1", "s1", lifecycle.ContainerExited, 1, 0, long)}
		}, want: "initfailed"},
		{name: "app created means inits are over", pod: inits, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerRunning, 0, 0, now)}
		}, want: ""},
		{name: "Always restarts a success", pod: app, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 0, 2, long)}
		}, want: "start:app/3"},
		{name: "OnFailure keeps a success", pod: onFailure, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 0, 0, long)}
		}, want: ""},
		{name: "OnFailure restarts a failure", pod: onFailure, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 3, 0, long)}
		}, want: "start:app/1"},
		{name: "Never keeps a failure", pod: never, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 3, 0, long)}
		}, want: ""},
		{name: "fresh crash waits the first back-off", pod: app, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 1, 0, now.Add(-time.Second))}
		}, want: "wait:app/10s"},
		{name: "back-off doubles on the next crash", pod: app, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 1, 1, now.Add(-15*time.Second))}
		}, prev: map[string]backOffEntry{"app": {delay: 10 * time.Second, finishedAt: now.Add(-time.Hour)}}, want: "wait:app/20s"},
		{name: "back-off is capped", pod: app, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 1, 9, now.Add(-time.Second))}
		}, prev: map[string]backOffEntry{"app": {delay: BackOffMax, finishedAt: now.Add(-time.Hour)}}, want: "wait:app/5m0s"},
		{name: "spec hash change restarts a running container", pod: changed, sbs: ready, cs: func(*v1.Pod) []containerInfo {
			return []containerInfo{ctr(app, "app", "s1", lifecycle.ContainerRunning, 0, 0, now)}
		}, want: "kill:app start:app/1"},
		{name: "unknown hash is adopted", pod: changed, sbs: ready, cs: func(*v1.Pod) []containerInfo {
			c := ctr(app, "app", "s1", lifecycle.ContainerRunning, 0, 0, now)
			c.hash = ""
			return []containerInfo{c}
		}, want: ""},
		{name: "created container is started, not created again", pod: app, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerCreated, 0, 0, now)}
		}, want: "start:app/0(existing)"},
		{name: "container not in spec is killed", pod: app, sbs: ready, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerRunning, 0, 0, now), ctr(p, "gone", "s1", lifecycle.ContainerRunning, 0, 0, now)}
		}, want: "kill:gone"},
		{name: "dead sandbox: kill, new sandbox, restart", pod: two, sbs: dead, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "a", "s1", lifecycle.ContainerRunning, 0, 0, now), ctr(p, "b", "s1", lifecycle.ContainerExited, 137, 4, now)}
		}, want: "killpod sandbox start:a/1 start:b/5"},
		{name: "dead sandbox under Never stays dead", pod: never, sbs: dead, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 137, 0, now)}
		}, want: ""},
		{name: "dead sandbox under OnFailure after success stays dead", pod: onFailure, sbs: dead, cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 0, 0, now)}
		}, want: ""},
		{name: "newest sandbox decides", pod: app, sbs: append([]sandboxInfo{{id: "s2", ready: true, attempt: 1, createdAt: now}}, dead...), cs: func(p *v1.Pod) []containerInfo {
			return []containerInfo{ctr(p, "app", "s1", lifecycle.ContainerExited, 137, 0, now)}
		}, want: "start:app/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &podState{uid: tt.pod.UID, sandboxes: tt.sbs}
			if tt.cs != nil {
				st.containers = tt.cs(tt.pod)
			}
			got := summary(computeActions(tt.pod, st, now, tt.prev, nil))
			if got != tt.want {
				t.Errorf("computeActions = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestNextBackOff(t *testing.T) {
	start := epoch
	var e backOffEntry
	has := false
	var got []time.Duration
	for i := range 7 {
		finished := start.Add(time.Duration(i+1) * time.Minute)
		e = nextBackOff(e, has, finished.Add(-time.Second), finished)
		has = true
		got = append(got, e.delay)
		if again := nextBackOff(e, true, finished.Add(-time.Second), finished); again != e {
			t.Fatalf("the same exit decided twice: %v then %v", e, again)
		}
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("delays: got %v; want %v", got, want)
	}
	finished := start.Add(time.Hour)
	if e = nextBackOff(e, true, finished.Add(-BackOffReset), finished); e.delay != BackOffInitial {
		t.Errorf("after a %v run: got %v; want %v", BackOffReset, e.delay, BackOffInitial)
	}
	if e = nextBackOff(e, true, finished.Add(time.Minute-BackOffReset+time.Second), finished.Add(time.Minute)); e.delay != 2*BackOffInitial {
		t.Errorf("after a run just under %v: got %v; want %v", BackOffReset, e.delay, 2*BackOffInitial)
	}
}
