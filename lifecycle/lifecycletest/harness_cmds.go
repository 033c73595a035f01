package lifecycletest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// Run executes one transcript command and returns its output.
//
// Commands:
//
//	update <create|update|sync|kill> <pod options> [kill-grace=N] [evict] [status-fn=X] [done=X] [start] [runtime-only] [both]
//	drain                     wake signalled workers until quiet
//	begin uid=U               wake U and hold its sync* call
//	finish uid=U [result=ok|canceled|terminal|MSG]
//	wake uid=U                one wake of U
//	fail <sync|terminating|runtime|terminated> uid=U|* [times=N]   (0 = until unfail)
//	unfail <op> uid=U|*
//	terminal-after uid=U n=N  SyncPod reports terminal from its Nth call
//	cache uid=U <empty|running|notfound>   first-sight runtime cache
//	inspect uid=U | query uid=U | static | queue uid=U | loops | done X
//	sync-known [uids=1,2]     SyncKnownPods with those desired UIDs
//	config add <pod options> | config remove uid=U | config mirror <pod options>
//	status-set uid=U phase=P [message=M]
//	runtime add uid=U [name=N] [containers=a,b] | runtime remove uid=U | runtime list-error on|off
//	pause uid=U | resume uid=U   drain skips paused workers
//	housekeeping | metrics | tick seconds=N | violations
//	dirs add uid=U [mounted] | dirs list      pod directories on disk
//	statuses                  the UIDs that have a sync status
//	status-list               the UIDs the (fake) status manager holds
func (h *Harness) Run(c *Cmd) string {
	h.out = nil
	switch c.Name {
	case "update":
		h.cmdUpdate(c)
	case "drain":
		h.Drain()
	case "begin":
		if !h.wake(types.UID(c.Opt("uid", "")), true) {
			h.printf("not signalled")
		}
	case "wake":
		if !h.wake(types.UID(c.Opt("uid", "")), false) {
			h.printf("not signalled")
		}
	case "finish":
		uid := types.UID(c.Opt("uid", ""))
		hw, ok := h.held[uid]
		if !ok {
			return Errorf("no held work for %s", uid)
		}
		delete(h.held, uid)
		h.finish(hw, c.Opt("result", ""))
	case "fail":
		n, _ := strconv.Atoi(c.Opt("times", "0"))
		h.fails[c.Args[0]+"/"+c.Opt("uid", "*")] = n
	case "unfail":
		delete(h.fails, c.Args[0]+"/"+c.Opt("uid", "*"))
	case "terminal-after":
		n, _ := strconv.Atoi(c.Opt("n", "1"))
		h.terminalAt[types.UID(c.Opt("uid", ""))] = n
	case "cache":
		h.cacheMode[types.UID(c.Opt("uid", ""))] = c.Args[0]
	case "inspect":
		return h.inspect(types.UID(c.Opt("uid", "")))
	case "query":
		return h.query(types.UID(c.Opt("uid", "")))
	case "static":
		return h.static()
	case "queue":
		return h.queue(c)
	case "loops":
		return fmt.Sprintf("loops=%d %v", len(h.loops), sortedUIDs(h.loops))
	case "done":
		return h.doneState(c.Args[0])
	case "sync-known":
		h.cmdSyncKnown(c)
	case "config":
		h.cmdConfig(c)
	case "status-set":
		h.statuses[types.UID(c.Opt("uid", ""))] = v1.PodStatus{Phase: v1.PodPhase(c.Opt("phase", "")), Message: c.Opt("message", "")}
	case "runtime":
		h.cmdRuntime(c)
	case "housekeeping":
		if err := h.housekeeper.Cleanup(context.Background(), h.config, h.mirrors); err != nil {
			h.printf("error: %v", err)
		}
	case "metrics":
		return h.metrics(c)
	case "tick":
		n, _ := strconv.Atoi(c.Opt("seconds", "1"))
		h.Clock.Step(time.Duration(n) * time.Second)
	case "pause":
		h.paused[types.UID(c.Opt("uid", ""))] = true
	case "resume":
		delete(h.paused, types.UID(c.Opt("uid", "")))
	case "dirs":
		switch c.Args[0] {
		case "add":
			h.Dirs.Add(types.UID(c.Opt("uid", "")), c.Has("mounted"))
		case "list":
			uids, _ := h.Dirs.List()
			return fmt.Sprintf("dirs=%v", uids)
		}
	case "statuses":
		uids := h.Workers.UIDs()
		sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
		return fmt.Sprintf("statuses=%d %v", len(uids), uids)
	case "status-list":
		return fmt.Sprintf("status-manager=%v", sortedUIDs(h.statuses))
	case "violations":
		return fmt.Sprintf("violations=%d %v", len(h.Violations), h.Violations)
	default:
		return Errorf("unknown command %q", c.Name)
	}
	return strings.Join(h.out, "\n")
}

func parseUpdateType(s string) lifecycle.UpdateType {
	switch s {
	case "create":
		return lifecycle.UpdateCreate
	case "update":
		return lifecycle.UpdateUpdate
	case "kill":
		return lifecycle.UpdateKill
	}
	return lifecycle.UpdateSync
}

func (h *Harness) cmdUpdate(c *Cmd) {
	pod := h.Pod(c)
	o := lifecycle.UpdatePodOptions{UpdateType: parseUpdateType(c.Args[0]), Pod: pod}
	if c.Has("start") {
		o.StartTime = h.Clock.Now()
	}
	rp := &lifecycle.RunningPod{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	switch {
	case c.Has("runtime-only"):
		o.Pod, o.RunningPod = nil, rp
	case c.Has("both"):
		o.RunningPod = rp
	}
	if c.Has("kill-grace") || c.Has("evict") || c.Has("status-fn") || c.Has("done") {
		k := &lifecycle.KillPodOptions{Evict: c.Has("evict")}
		if g := c.Opt("kill-grace", ""); g != "" {
			n, _ := strconv.ParseInt(g, 10, 64)
			k.GracePeriodOverride = &n
		}
		if name := c.Opt("status-fn", ""); name != "" {
			k.PodStatusFunc = func(s *v1.PodStatus) { s.Message = name }
		}
		if name := c.Opt("done", ""); name != "" {
			ch := make(chan struct{})
			h.done[name] = ch
			k.CompletedCh = ch
		}
		o.KillPodOptions = k
	}
	h.UpdatePod(o)
}

func (h *Harness) doneState(name string) string {
	ch, ok := h.done[name]
	if !ok {
		return Errorf("no channel %s", name)
	}
	select {
	case <-ch:
		return name + " closed"
	default:
		return name + " open"
	}
}

func tstr(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return strconv.FormatInt(t.Unix(), 10)
}

func describeUpdate(u *lifecycle.UpdatePodOptions, withType bool) string {
	if u == nil {
		return "none"
	}
	var parts []string
	if withType {
		parts = append(parts, "type="+u.UpdateType.String())
	}
	if u.Pod != nil {
		p := "pod=" + u.Pod.Name
		if v := u.Pod.Labels["version"]; v != "" {
			p += "@" + v
		}
		parts = append(parts, p)
	}
	if u.MirrorPod != nil {
		parts = append(parts, "mirror="+u.MirrorPod.Name)
	}
	if u.RunningPod != nil {
		parts = append(parts, "running-pod="+string(u.RunningPod.ID))
	}
	if k := u.KillPodOptions; k != nil {
		g := "nil"
		if k.GracePeriodOverride != nil {
			g = strconv.FormatInt(*k.GracePeriodOverride, 10)
		}
		parts = append(parts, fmt.Sprintf("kill={grace=%s evict=%t}", g, k.Evict))
	}
	if withType && !u.StartTime.IsZero() {
		parts = append(parts, "start="+tstr(u.StartTime))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func (h *Harness) inspect(uid types.UID) string {
	st, ok := h.Workers.Inspect(uid)
	if !ok {
		return "unknown"
	}
	var flags []string
	for _, f := range []struct {
		on   bool
		name string
	}{{st.Working, "working"}, {st.StartedTerminating, "startedTerminating"}, {st.Deleted, "deleted"},
		{st.Evicted, "evicted"}, {st.Finished, "finished"}, {st.RestartRequested, "restartRequested"},
		{st.ObservedRuntime, "observedRuntime"}, {st.HasWorker, "worker"}, {st.Signalled, "signalled"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	return fmt.Sprintf("fullname=%s synced=%s started=%s terminating=%s terminated=%s grace=%d\nflags=%s\npending=%s\nactive=%s",
		st.Fullname, tstr(st.SyncedAt), tstr(st.StartedAt), tstr(st.TerminatingAt), tstr(st.TerminatedAt), st.GracePeriod,
		strings.Join(flags, ","), describeUpdate(st.Pending, true), describeUpdate(st.Active, false))
}

func (h *Harness) query(uid types.UID) string {
	w := h.Workers
	return fmt.Sprintf("known-terminated=%t could-have-running=%t termination-requested=%t\ncontainers-terminating=%t runtime-removable=%t content-removable=%t finished=%t",
		w.IsPodKnownTerminated(uid), w.CouldHaveRunningContainers(uid), w.IsPodTerminationRequested(uid),
		w.ShouldPodContainersBeTerminating(uid), w.ShouldPodRuntimeBeRemoved(uid), w.ShouldPodContentBeRemoved(uid),
		w.ShouldPodBeFinished(uid))
}

func (h *Harness) static() string {
	started, waiting := h.Workers.StaticPods()
	var names []string
	for n := range started {
		names = append(names, n)
	}
	for n := range waiting {
		if _, ok := started[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("%s: started=%s waiting=%v mirror-terminating=%t", n, started[n], waiting[n],
			h.Workers.IsPodForMirrorPodTerminatingByFullName(n)))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "\n")
}

func (h *Harness) queue(c *Cmd) string {
	var out []string
	for _, u := range strings.Split(c.Opt("uids", c.Opt("uid", "")), ",") {
		t, ok := h.Workers.Queue().Due(types.UID(u))
		if !ok {
			out = append(out, u+": -")
			continue
		}
		out = append(out, fmt.Sprintf("%s: due in %s", u, t.Sub(h.Clock.Now())))
	}
	return strings.Join(out, "\n")
}

func (h *Harness) cmdSyncKnown(c *Cmd) {
	var desired []*v1.Pod
	if u := c.Opt("uids", ""); u != "" {
		for _, id := range strings.Split(u, ",") {
			p := &v1.Pod{}
			p.UID = types.UID(id)
			desired = append(desired, p)
		}
	}
	res := h.SyncKnownPods(desired)
	for _, uid := range sortedUIDs(res) {
		s := res[uid]
		h.printf("%s: %s orphan=%t config=%t static=%t", uid, s.State, s.Orphan, s.HasConfig, s.Static)
	}
	if len(res) == 0 {
		h.printf("none")
	}
}

func (h *Harness) cmdConfig(c *Cmd) {
	switch c.Args[0] {
	case "add":
		pod := h.Pod(c)
		h.removeConfig(pod.UID)
		h.config = append(h.config, pod)
	case "mirror":
		h.mirrors = append(h.mirrors, h.Pod(c))
	case "remove":
		h.removeConfig(types.UID(c.Opt("uid", "")))
	}
}

func (h *Harness) removeConfig(uid types.UID) {
	kept := h.config[:0]
	for _, p := range h.config {
		if p.UID != uid {
			kept = append(kept, p)
		}
	}
	h.config = kept
}

func (h *Harness) cmdRuntime(c *Cmd) {
	uid := types.UID(c.Opt("uid", ""))
	switch c.Args[0] {
	case "add":
		h.Runtime.AddPod(uid, c.Opt("name", "pod-"+string(uid)), c.Opt("ns", "ns"), strings.Split(c.Opt("containers", "c"), ",")...)
	case "remove":
		h.Runtime.RemovePod(uid)
	case "list-error":
		h.Runtime.ListErr = nil
		if c.Opt("on", "") != "" || (len(c.Args) > 1 && c.Args[1] == "on") {
			h.Runtime.ListErr = fmt.Errorf("runtime list: %w", lifecycle.ErrNotFound)
		}
	case "calls":
		for _, l := range h.Runtime.Calls() {
			h.printf("%s", l)
		}
	}
}

// metrics prints the non-zero lifecycle metrics, sorted.
func (h *Harness) metrics(c *Cmd) string {
	fams, err := h.Registry.Gather()
	if err != nil {
		return Errorf("%v", err)
	}
	var out []string
	filter := c.Opt("name", "")
	for _, f := range fams {
		name := f.GetName()
		if (filter != "" && !strings.Contains(name, filter)) || (strings.Contains(name, "time_weighted") && !strings.Contains(filter, "time_weighted")) {
			continue
		}
		series := 0
		for _, m := range f.GetMetric() {
			series++
			v := metricValue(f.GetType(), m)
			if v == 0 {
				continue
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("%s{%s} %g", name, strings.Join(labels, ","), v))
		}
		if name == "kubelet_working_pods" {
			out = append(out, fmt.Sprintf("kubelet_working_pods series=%d", series))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "\n")
}

func metricValue(t dto.MetricType, m *dto.Metric) float64 {
	switch t {
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}
