package lifecycle_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// rank orders the lifecycle of a UID; it may only grow until the UID is
// forgotten.
func rank(st lifecycle.PodWorkerState) int {
	switch {
	case st.Finished:
		return 3
	case !st.TerminatedAt.IsZero():
		return 2
	case !st.TerminatingAt.IsZero():
		return 1
	}
	return 0
}

// TestWorkerInvariants drives the harness with random interleavings of
// create, update, kill, API delete, force delete, runtime reports, runtime
// errors, housekeeping, clock steps and partial worker progress, and checks
// the invariants of docs/lifecycle.md, section 9, after every step.
func TestWorkerInvariants(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := lifecycletest.NewHarness()
		uids := []string{"a", "b", "c", "s1", "s2"}
		podOpts := func(uid string) string {
			if uid[0] == 's' {
				return "uid=" + uid + " name=static static"
			}
			return "uid=" + uid
		}
		lastRank := map[string]int{}
		incarnation := map[string]int64{}
		lastGrace := map[string]int64{}
		synced := false
		held := map[string]bool{}
		starts := watchStarts(h)
		run := func(line string) {
			h.Run(lifecycletest.ParseCmd(line))
		}
		steps := rapid.IntRange(1, 100).Draw(rt, "steps")
		for range steps {
			uid := rapid.SampledFrom(uids).Draw(rt, "uid")
			// rapid draws small indexes more often: the actions that
			// interleave (held work, housekeeping, config changes) come
			// first.
			action := rapid.SampledFrom([]string{"begin", "housekeeping", "finish", "update", "create", "config-add",
				"force-delete", "kill", "delete", "drain", "tick", "runtime-report", "runtime-error"}).Draw(rt, "action")
			switch action {
			case "create":
				run("config add " + podOpts(uid))
				run("update create " + podOpts(uid))
			case "config-add":
				// The desired set changes without an update: housekeeping
				// is the only one to notice.
				run("config add " + podOpts(uid))
			case "update":
				run("update update " + podOpts(uid))
			case "kill":
				g := rapid.IntRange(0, 40).Draw(rt, "grace")
				run(fmt.Sprintf("update kill %s kill-grace=%d", podOpts(uid), g))
			case "delete":
				g := rapid.IntRange(0, 40).Draw(rt, "grace")
				run(fmt.Sprintf("config add %s deleted=%d", podOpts(uid), g))
				run(fmt.Sprintf("update update %s deleted=%d", podOpts(uid), g))
			case "force-delete":
				run("config remove uid=" + uid)
			case "runtime-report":
				run("runtime add uid=" + uid)
			case "runtime-error":
				op := rapid.SampledFrom([]string{"sync", "terminating", "runtime", "terminated"}).Draw(rt, "op")
				run(fmt.Sprintf("fail %s uid=%s times=1", op, uid))
			case "housekeeping":
				// Housekeeping runs whether or not a sync is held: in the
				// node it does not wait for the workers.
				run("housekeeping")
				synced = true
			case "tick":
				run("tick seconds=1")
			case "drain":
				run("drain")
			case "begin":
				if !held[uid] {
					out := h.Run(lifecycletest.ParseCmd("begin uid=" + uid))
					held[uid] = out != "not signalled" && out != "ok" && out != ""
					if !held[uid] {
						delete(held, uid)
					}
				}
			case "finish":
				// Finish one of the held syncs, whichever UID was drawn.
				if len(held) > 0 {
					u := rapid.SampledFrom(slices.Sorted(maps.Keys(held))).Draw(rt, "held")
					run("finish uid=" + u)
					delete(held, u)
				}
			}
			if len(h.Violations) > 0 {
				rt.Fatalf("invariant 4: %v", h.Violations)
			}
			if v := starts.check(); len(v) > 0 {
				rt.Fatalf("invariant 4: %v", v)
			}
			for _, u := range uids {
				st, ok := h.Workers.Inspect(types.UID(u))
				if !ok {
					delete(lastRank, u)
					delete(lastGrace, u)
					continue
				}
				if inc := st.SyncedAt.UnixNano(); inc != incarnation[u] {
					// Purged and re-created within one step (UID reuse).
					incarnation[u] = inc
					delete(lastRank, u)
					delete(lastGrace, u)
				}
				if r := rank(st); r < lastRank[u] {
					rt.Fatalf("invariant 3: %s went from rank %d back to %d", u, lastRank[u], r)
				} else {
					lastRank[u] = r
				}
				if st.GracePeriod != 0 {
					if st.GracePeriod < 1 {
						rt.Fatalf("invariant 5: %s grace %d < 1", u, st.GracePeriod)
					}
					if g, ok := lastGrace[u]; ok && st.GracePeriod > g {
						rt.Fatalf("invariant 5: %s grace grew from %d to %d", u, g, st.GracePeriod)
					}
					lastGrace[u] = st.GracePeriod
				}
				if st.StartedTerminating && st.TerminatingAt.IsZero() {
					rt.Fatalf("%s observed termination that was never requested", u)
				}
			}
			if got := h.Workers.CouldHaveRunningContainers("never-seen"); got != !synced {
				rt.Fatalf("invariant 9: unknown UID possibly running = %t with podsSynced %t", got, synced)
			}
		}
		for u := range held {
			run("finish uid=" + u)
		}
		if v := starts.check(); len(v) > 0 {
			rt.Fatalf("invariant 4: %v", v)
		}
		// Invariants 2 and 8: with errors cleared, repeated housekeeping
		// and draining finish every pod that is not desired.
		for _, op := range []string{"sync", "terminating", "runtime", "terminated"} {
			run("unfail " + op + " uid=*")
			for _, u := range uids {
				run("unfail " + op + " uid=" + u)
			}
		}
		for _, u := range uids {
			run("config remove uid=" + u)
		}
		for range 6 {
			run("housekeeping")
			run("drain")
		}
		for _, u := range uids {
			if st, ok := h.Workers.Inspect(types.UID(u)); ok && !st.Finished {
				rt.Fatalf("invariant 8: orphan %s never finished: %+v", u, st)
			}
		}
		if v := starts.check(); len(v) > 0 {
			rt.Fatalf("invariant 4: %v", v)
		}
		pods, _ := h.Runtime.ListPods(t.Context())
		for _, p := range pods {
			if p.IsRunning() {
				rt.Fatalf("invariant 7: runtime pod %s still running after housekeeping", p.ID)
			}
		}
	})
}

// TestStatusInvariants checks the status manager's guarantees over random
// status sequences: versions never go backwards, a terminal phase is
// sticky, and finished pods report no container as exit 0 without
// runtime evidence.
func TestStatusInvariants(t *testing.T) {
	phases := []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed}
	rapid.Check(t, func(rt *rapid.T) {
		e := newStatusEnv()
		pod := apiPod("1", "p")
		pod.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyNever, v1.RestartPolicyOnFailure}).Draw(rt, "policy")
		e.sink.Store(pod)
		var lastVersion uint64
		var terminal v1.PodPhase
		evidence := map[string]bool{}
		for range rapid.IntRange(1, 20).Draw(rt, "steps") {
			if rapid.IntRange(0, 6).Draw(rt, "terminate") == 0 {
				e.m.TerminatePod(pod)
			} else {
				var cs []v1.ContainerStatus
				for _, name := range []string{"c1", "c2"} {
					switch rapid.IntRange(0, 3).Draw(rt, "state") {
					case 0:
						cs = append(cs, running(name, name))
					case 1:
						cs = append(cs, terminated(name, 0))
						evidence[name] = true
					case 2:
						cs = append(cs, terminated(name, 1))
					default:
						cs = append(cs, waiting(name))
					}
				}
				e.m.SetPodStatus(pod, v1.PodStatus{Phase: rapid.SampledFrom(phases).Draw(rt, "phase"), ContainerStatuses: cs})
			}
			if rapid.Bool().Draw(rt, "sync") {
				e.m.SyncBatch(t.Context(), rapid.Bool().Draw(rt, "all"))
			}
			v := e.m.Version("1")
			if v < lastVersion {
				rt.Fatalf("version went back from %d to %d", lastVersion, v)
			}
			lastVersion = v
			st, _ := e.m.PodStatus("1")
			if terminal != "" && st.Phase != terminal {
				rt.Fatalf("terminal phase %s became %s", terminal, st.Phase)
			}
			if st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed {
				terminal = st.Phase
			}
			if api, ok := e.sink.Pod("ns", "p"); ok && isTerminal(api.Status.Phase) && terminal != "" && api.Status.Phase != terminal {
				rt.Fatalf("sink phase %s differs from terminal %s", api.Status.Phase, terminal)
			}
			for _, c := range st.ContainerStatuses {
				if term := c.State.Terminated; term != nil && term.ExitCode == 0 && !evidence[c.Name] {
					rt.Fatalf("container %s reported exit 0 without runtime evidence", c.Name)
				}
			}
		}
	})
}

// startWatch judges invariant 4 from the runtime's side: it sees every
// container start the fake runtime performs and fails a start of a UID
// whose termination the pod worker had acknowledged, either at the moment
// of the start or at the end of any earlier step of the same incarnation.
// It does not look at StartedTerminating, which the worker sets only when
// the terminating work begins, after an in-flight sync may have started
// containers.
type startWatch struct {
	h *lifecycletest.Harness
	// requested holds, per UID, the incarnation (SyncedAt) in which
	// termination was seen requested at the end of a step.
	requested  map[types.UID]int64
	violations []string
}

func watchStarts(h *lifecycletest.Harness) *startWatch {
	s := &startWatch{h: h, requested: map[types.UID]int64{}}
	prev := h.Runtime.BeforeStart
	h.Runtime.BeforeStart = func(uid types.UID, c string) error {
		st, known := h.Workers.Inspect(uid)
		switch {
		case !known:
			s.violations = append(s.violations, fmt.Sprintf("container %s of %s started for a UID the worker does not know", c, uid))
		case h.Workers.IsPodTerminationRequested(uid):
			s.violations = append(s.violations, fmt.Sprintf("container %s of %s started after termination was requested", c, uid))
		case s.requested[uid] == st.SyncedAt.UnixNano():
			s.violations = append(s.violations, fmt.Sprintf("container %s of %s started after termination was requested in an earlier step", c, uid))
		}
		if prev != nil {
			return prev(uid, c)
		}
		return nil
	}
	return s
}

// check records the UIDs whose termination is requested now and returns
// the violations seen so far.
func (s *startWatch) check() []string {
	for _, uid := range s.h.Workers.UIDs() {
		if st, ok := s.h.Workers.Inspect(uid); ok && s.h.Workers.IsPodTerminationRequested(uid) {
			s.requested[uid] = st.SyncedAt.UnixNano()
		}
	}
	return s.violations
}

func isTerminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// TestGeneratedStatusInvariants checks status generation over random
// runtime views, previous statuses, start failures, restart policies,
// deletions and terminal flags:
//   - no container is reported exit 0 (now or as its last termination)
//     without the runtime or an earlier status having shown exit 0;
//   - once the pod is deleted or terminal, a container the runtime shows
//     exited with N, or that an earlier status showed exited with N and
//     the runtime no longer holds, is reported terminated with N, and
//     TerminatePod keeps N: 137 is only for containers whose exit was
//     never observed;
//   - with a RestartAllContainers rule on c1 (exit 42), a pod neither
//     deleted nor terminal whose runtime shows a container of an ended run
//     (ResetByRestartAll) is not in a terminal phase, and only such a pod
//     reports the AllContainersRestarting condition.
func TestGeneratedStatusInvariants(t *testing.T) {
	names := []string{"c1", "c2"}
	rapid.Check(t, func(rt *rapid.T) {
		pod := apiPod("1", "p")
		pod.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyNever, v1.RestartPolicyOnFailure}).Draw(rt, "policy")
		deleted := rapid.Bool().Draw(rt, "deleted")
		if deleted {
			ts := metav1.Now()
			pod.DeletionTimestamp = &ts
		}
		terminal := rapid.Bool().Draw(rt, "terminal")
		restartAll := rapid.Bool().Draw(rt, "restartAll")
		if restartAll {
			pod.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
			pod.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
		}
		anyReset := false
		t0 := time.Unix(1000, 0)
		rs := &lifecycle.PodStatus{ID: "1"}
		reasons := lifecycle.NewReasonCache()
		var cached v1.PodStatus
		evidence := map[string]bool{}
		for _, name := range names {
			switch rapid.IntRange(0, 4).Draw(rt, "runtime "+name) {
			case 0: // never seen
			case 1:
				rs.ContainerStatuses = append(rs.ContainerStatuses, lifecycle.ContainerStatus{Name: name, State: lifecycle.ContainerRunning})
			case 2:
				code := rapid.SampledFrom([]int32{0, 1, 2, 42, 137}).Draw(rt, "exit "+name)
				reset := restartAll && rapid.Bool().Draw(rt, "reset "+name)
				anyReset = anyReset || reset
				rs.ContainerStatuses = append(rs.ContainerStatuses, lifecycle.ContainerStatus{Name: name, State: lifecycle.ContainerExited, ExitCode: code,
					CreatedAt: t0.Add(time.Minute), ResetByRestartAll: reset})
				evidence[name] = evidence[name] || code == 0
			case 3:
				rs.ContainerStatuses = append(rs.ContainerStatuses, lifecycle.ContainerStatus{Name: name, State: lifecycle.ContainerUnknown})
			case 4:
				rs.ContainerStatuses = append(rs.ContainerStatuses, lifecycle.ContainerStatus{Name: name, State: lifecycle.ContainerCreated})
			}
			if rapid.Bool().Draw(rt, "earlier instance "+name) {
				code := rapid.SampledFrom([]int32{0, 1, 42}).Draw(rt, "earlier exit "+name)
				rs.ContainerStatuses = append(rs.ContainerStatuses, lifecycle.ContainerStatus{ID: name + "-0", Name: name, State: lifecycle.ContainerExited, ExitCode: code, CreatedAt: t0})
				evidence[name] = evidence[name] || code == 0
			}
			switch rapid.IntRange(0, 3).Draw(rt, "previous "+name) {
			case 0: // none
			case 1:
				cached.ContainerStatuses = append(cached.ContainerStatuses, running(name, name))
			case 2:
				code := rapid.SampledFrom([]int32{0, 1}).Draw(rt, "previous exit "+name)
				cached.ContainerStatuses = append(cached.ContainerStatuses, terminated(name, code))
				evidence[name] = evidence[name] || code == 0
			case 3:
				cached.ContainerStatuses = append(cached.ContainerStatuses, waiting(name))
			}
			if rapid.Bool().Draw(rt, "start failure "+name) {
				reasons.Add("1", name, lifecycle.StartFailure{Reason: rapid.SampledFrom([]string{"CrashLoopBackOff", "ErrImageNeverPull"}).Draw(rt, "reason "+name)})
			}
		}
		if len(cached.ContainerStatuses) > 0 {
			cached.Phase = v1.PodRunning
		}
		got := lifecycle.GeneratePodStatus(pod, rs, cached, terminal, reasons)
		if anyReset && !deleted && !terminal && isTerminal(got.Phase) {
			rt.Fatalf("phase %s while the pod restarts all its containers: %+v", got.Phase, got.ContainerStatuses)
		}
		for _, c := range got.Conditions {
			if c.Type == v1.AllContainersRestarting && !restartAll {
				rt.Fatalf("AllContainersRestarting reported by a pod without a RestartAllContainers rule: %+v", c)
			}
		}
		for _, c := range got.ContainerStatuses {
			for _, term := range []*v1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
				if term != nil && term.ExitCode == 0 && !evidence[c.Name] {
					rt.Fatalf("container %s reported exit 0 without runtime evidence: %+v", c.Name, c)
				}
			}
		}
		if !deleted && !terminal {
			return
		}
		e := newStatusEnv()
		e.m.SetPodStatus(pod, got)
		e.m.TerminatePod(pod)
		final, _ := e.m.PodStatus("1")
		for stage, st := range map[string]v1.PodStatus{"generated": got, "after TerminatePod": final} {
			for _, c := range st.ContainerStatuses {
				cs := rs.Container(c.Name)
				if cs == nil || cs.State != lifecycle.ContainerExited {
					continue
				}
				if term := c.State.Terminated; term == nil || term.ExitCode != cs.ExitCode {
					rt.Fatalf("%s: container %s exited %d in the runtime but is reported %+v", stage, c.Name, cs.ExitCode, c.State)
				}
			}
			// A container gone from the runtime keeps the exit an earlier
			// status showed (status rule 5(h)): it is not lost.
			for _, c := range st.ContainerStatuses {
				if rs.Container(c.Name) != nil {
					continue
				}
				for _, prev := range cached.ContainerStatuses {
					if prev.Name != c.Name || prev.State.Terminated == nil {
						continue
					}
					if term := c.State.Terminated; term == nil || term.ExitCode != prev.State.Terminated.ExitCode {
						rt.Fatalf("%s: container %s, gone from the runtime, had exited %d but is reported %+v", stage, c.Name, prev.State.Terminated.ExitCode, c.State)
					}
				}
			}
		}
	})
}
