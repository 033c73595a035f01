package volumemanager

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
	"k8s.io/apimachinery/pkg/types"
)

// harness drives a Reconciler by transcript commands, saving its records
// after every change as the Manager does, and keeps the world its
// operations produced.
type harness struct {
	r        *Reconciler
	now      time.Time
	store    []Record
	world    *world
	inflight map[int]Op
	next     int
	fail     map[string]bool                // reconstruction failures, pod/name
	attached map[VolumeID]map[string]string // the cluster's attachments: publish contexts
	lostDirs map[string]bool                // pod volume directories gone, pod/name
	out      strings.Builder
}

func newHarness() *harness {
	return &harness{
		r: NewReconciler(testClassifier), now: time.Unix(0, 0).UTC(), world: newWorld(),
		inflight: map[int]Op{}, fail: map[string]bool{}, lostDirs: map[string]bool{},
		attached: map[VolumeID]map[string]string{},
	}
}

func (h *harness) printf(format string, args ...any) { fmt.Fprintf(&h.out, format+"\n", args...) }

func (h *harness) save() {
	if h.r.Dirty() {
		h.store = copyRecords(h.r.Records())
	}
}

// run executes one command and returns its output.
func (h *harness) run(c *lifecycletest.Cmd) string {
	h.out.Reset()
	switch c.Name {
	case "add":
		pod := testPod(c.Opt("pod", ""), c.Opt("vols", ""))
		vols, err := DesiredVolumes(context.Background(), pod, testResolver{})
		if err != nil {
			return lifecycletest.Errorf("%v", err)
		}
		if c.Opt("attach", "") != "" {
			for i := range vols {
				vols[i].Volume.Attach = vols[i].Volume.Shared
			}
		}
		h.r.SetPod(pod.UID, vols)
	case "remove":
		h.r.RemovePod(types.UID(c.Opt("pod", "")))
	case "populated":
		h.r.MarkDesiredPopulated()
	case "tick":
		d, err := time.ParseDuration(c.Opt("d", "0"))
		if err != nil {
			return lifecycletest.Errorf("%v", err)
		}
		h.now = h.now.Add(d)
	case "step":
		h.step()
	case "finish":
		h.finish(c)
	case "state":
		h.state()
	case "mounted":
		uid := types.UID(c.Opt("pod", ""))
		h.printf("mounted=%v unmounted=%v", h.r.PodMounted(uid), h.r.UnmountedVolumes(uid))
	case "unmounted":
		h.printf("unmounted=%v", h.r.PodVolumesUnmounted(types.UID(c.Opt("pod", ""))))
	case "inuse":
		h.printf("inuse=%v", h.r.VolumesInUse())
	case "report":
		// The node status with the volumes in use was accepted.
		h.r.MarkVolumesReportedInUse(h.r.VolumesInUse())
	case "attach":
		// The cluster attaches vol (a VolumeAttachment attached), with the
		// publish context pc=key:value.
		pc := map[string]string{}
		if k, v, ok := strings.Cut(c.Opt("pc", ""), ":"); ok {
			pc[k] = v
		}
		h.attached[VolumeID(c.Opt("vol", ""))] = pc
	case "fail-reconstruct":
		h.fail[c.Opt("pod", "")+"/"+c.Opt("name", "")] = true
	case "heal-reconstruct":
		delete(h.fail, c.Opt("pod", "")+"/"+c.Opt("name", ""))
	case "lasterr":
		h.printf("lasterr=%v", h.r.LastError(types.UID(c.Opt("pod", ""))))
	case "unresolved":
		h.printf("unresolved=%v", h.r.Unresolved())
	case "lose-records":
		h.store = nil
	case "lose-dir":
		h.lostDirs[c.Opt("pod", "")+"/"+c.Opt("name", "")] = true
	case "restart":
		h.restart()
	default:
		return lifecycletest.Errorf("unknown command %q", c.Name)
	}
	return h.out.String()
}

func (h *harness) step() {
	ops := h.r.Step(h.now)
	h.save()
	for _, op := range ops {
		h.next++
		h.inflight[h.next] = op
		if pc := op.Volume.PublishContext; len(pc) > 0 {
			h.printf("%d: %s pc=%v", h.next, op, pc)
			continue
		}
		h.printf("%d: %s", h.next, op)
	}
	if next, ok := h.r.NextRetry(h.now); ok && len(ops) == 0 {
		h.printf("next retry in %s", next.Sub(h.now))
	}
}

// finish completes the in-flight operation given as the first argument
// (or every one, "all") with err=<name>.
func (h *harness) finish(c *lifecycletest.Cmd) {
	err, ok := namedErr(c.Opt("err", "ok"))
	if !ok {
		h.printf("error: unknown err %q", c.Opt("err", ""))
		return
	}
	var ids []int
	if len(c.Args) > 0 && c.Args[0] == "all" {
		ids = sortedKeys(h.inflight)
	} else if len(c.Args) > 0 {
		n, _ := strconv.Atoi(c.Args[0])
		ids = []int{n}
	}
	for _, n := range ids {
		op, ok := h.inflight[n]
		if !ok {
			h.printf("error: no operation %d in flight", n)
			return
		}
		delete(h.inflight, n)
		if rerr := h.complete(op, err); rerr != nil {
			h.printf("%d: %v", n, rerr)
		}
	}
	h.save()
	h.state()
}

// complete feeds op's result back: the world's effect and Complete, or,
// for an OpReconstruct, the world's answer (err, when set, stands for
// the plugin's failure) and Resolve, whose error it returns.
func (h *harness) complete(op Op, err error) error {
	if op.Kind == OpReconstruct {
		ans, rerr := ask(context.Background(), worldReconstructor{h.world, h.fail}, op.Dir())
		if err != nil {
			ans, rerr = Reconstructed{}, &ReconstructError{Dir: op.Dir(), Err: err}
		}
		h.r.Resolve(h.now, op, ans, rerr)
		return rerr
	}
	if op.Kind == OpVerifyAttached {
		pc, ok := h.attached[op.Volume.ID]
		if err == nil && !ok {
			err = fmt.Errorf("VolumeAttachment of %s: %w", op.Volume.ID, ErrNotAttached)
		}
		h.r.Attached(h.now, op, pc, err)
		return err
	}
	class := Final
	if err != nil {
		class = testClassifier(err)
	}
	h.world.apply(op, err, class)
	h.r.Complete(h.now, op, err)
	return nil
}

func (h *harness) state() {
	if len(h.r.actual) == 0 {
		h.printf("asw: empty")
	}
	for _, id := range sortedKeys(h.r.actual) {
		d := h.r.actual[id]
		line := fmt.Sprintf("asw: %s device=%s", id, d.state)
		if d.reconstructed {
			line += "(reconstructed)"
		}
		if d.vol.Unresolved {
			line += " unresolved"
		}
		if d.attached {
			line += " attached"
		}
		for _, uid := range sortedKeys(d.pods) {
			pm := d.pods[uid]
			line += fmt.Sprintf(" %s=%s", uid, pm.state)
			if pm.reconstructed {
				line += "(reconstructed)"
			}
		}
		h.printf("%s", line)
	}
}

// restart drops the reconciler and its calls in flight (their effect on
// the world is uncertain) and reconstructs from the saved records and the
// world's directories.
func (h *harness) restart() {
	for _, n := range sortedKeys(h.inflight) {
		h.world.apply(h.inflight[n], errPluginDied, UncertainError)
		delete(h.inflight, n)
	}
	h.r = NewReconciler(testClassifier)
	var dirs []PodVolumeDir
	for _, d := range h.world.dirs() {
		if !h.lostDirs[string(d.Pod)+"/"+d.Name] {
			dirs = append(dirs, d)
		}
	}
	recs, err := Reconstruct(context.Background(), copyRecords(h.store), dirs, worldReconstructor{h.world, h.fail})
	if err != nil {
		h.printf("reconstruct: %v", err)
	}
	h.r.Restore(h.now, recs)
	h.save()
	h.state()
}
