package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// codeErr stands for a gRPC status error of the given code name.
type codeErr string

func (e codeErr) Error() string { return "rpc error: code = " + string(e) }

// errNotReached stands for a call that never reached the plugin.
var errNotReached = errors.New("plugin not registered")

// errPluginDied stands for the supervisor's error when a plugin exits.
var errPluginDied = errors.New("plugin exited")

// testClassifier is the wire rule (final, uncertain, transient) over the fake errors.
var testClassifier = ClassifierFunc(func(err error) Class {
	var c codeErr
	switch {
	case errors.Is(err, errNotReached):
		return Transient
	case errors.As(err, &c):
		switch c {
		case "Canceled", "DeadlineExceeded", "Unavailable", "ResourceExhausted", "Aborted":
			return UncertainError
		}
		return Final
	}
	return UncertainError // no status, and a plugin that died
})

// namedErr maps a transcript name to an error; "ok" is nil.
func namedErr(name string) (error, bool) {
	switch name {
	case "", "ok":
		return nil, true
	case "deadline":
		return codeErr("DeadlineExceeded"), true
	case "unavailable":
		return codeErr("Unavailable"), true
	case "aborted":
		return codeErr("Aborted"), true
	case "canceled":
		return codeErr("Canceled"), true
	case "exhausted":
		return codeErr("ResourceExhausted"), true
	case "invalid":
		return codeErr("InvalidArgument"), true
	case "internal":
		return codeErr("Internal"), true
	case "nostatus":
		return errors.New("local failure after send"), true
	case "transient":
		return errNotReached, true
	case "died":
		return errPluginDied, true
	}
	return nil, false
}

// testResolver resolves claim cN to a CSI PV "pv-cN" with handle cN;
// claims naming "blk" give block volumes, starting "fc" FC and "iscsi"
// iSCSI;
// "missing" is not found, "unbound" not bound.
type testResolver struct{}

func (testResolver) PersistentVolume(_ context.Context, pod *v1.Pod, claim string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error) {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + claim}}
	lun := int32(0)
	switch {
	case claim == "missing":
		return nil, nil, errors.New("not found")
	case claim == "unbound":
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: pod.Namespace}}, nil, nil
	case strings.HasPrefix(claim, "fc"):
		pv.Spec.FC = &v1.FCVolumeSource{TargetWWNs: []string{"50060e801049cfd1"}, Lun: &lun}
	case strings.HasPrefix(claim, "iscsi"):
		pv.Spec.ISCSI = &v1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:" + claim}
	default:
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: "drv", VolumeHandle: claim}
	}
	if strings.Contains(claim, "blk") {
		block := v1.PersistentVolumeBlock
		pv.Spec.VolumeMode = &block
	}
	claimObj := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: pod.Namespace}}
	return claimObj, pv, nil
}

// testPod builds a pod whose volumes are given as kind:name pairs:
// pvc:<claim>, empty:<name>, mem:<name>, host:<name>, csi:<name>.
func testPod(uid string, vols string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-" + uid, Namespace: "ns", UID: types.UID(uid)}}
	for _, spec := range strings.Split(vols, ",") {
		if spec == "" {
			continue
		}
		kind, name, _ := strings.Cut(spec, ":")
		v := v1.Volume{Name: name}
		switch kind {
		case "pvc":
			v.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}
		case "empty":
			v.EmptyDir = &v1.EmptyDirVolumeSource{}
		case "mem":
			v.EmptyDir = &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}
		case "host":
			v.HostPath = &v1.HostPathVolumeSource{Path: "/srv/" + name}
		case "csi":
			v.CSI = &v1.CSIVolumeSource{Driver: "drv"}
		default:
			panic(fmt.Sprintf("unknown volume kind %q", kind))
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, v)
	}
	return pod
}

// world is what a fake plugin's node holds, judged from the calls issued
// and their results: what may be staged and what may be published.
type world struct {
	staged    map[VolumeID]bool
	published map[VolumeID]map[types.UID]string // volume → pod → spec name
	volumes   map[VolumeID]Volume
}

func newWorld() *world {
	return &world{staged: map[VolumeID]bool{}, published: map[VolumeID]map[types.UID]string{}, volumes: map[VolumeID]Volume{}}
}

// apply records the effect of op finishing with err of class c. A call
// cut short by a host restart is applied as uncertain.
func (w *world) apply(op Op, err error, c Class) {
	id := op.Volume.ID
	w.volumes[id] = op.Volume
	maybe := err == nil || c == UncertainError
	switch op.Kind {
	case OpStage:
		if maybe {
			w.staged[id] = true
		} else if c == Final {
			w.staged[id] = false
		}
	case OpUnstage:
		if err == nil {
			delete(w.staged, id)
		}
	case OpPublish, OpMap:
		if maybe {
			if w.published[id] == nil {
				w.published[id] = map[types.UID]string{}
			}
			w.published[id][op.Pod] = op.Name
		} else if c == Final {
			delete(w.published[id], op.Pod)
		}
	case OpUnpublish, OpUnmap:
		if err == nil {
			delete(w.published[id], op.Pod)
		}
		if err == nil && op.Volume.Unresolved {
			// A placeholder's unpublish clears its target, whichever
			// volume is published there.
			for other, pods := range w.published {
				if w.volumes[other].Plugin == op.Volume.Plugin && pods[op.Pod] == op.Name {
					delete(pods, op.Pod)
				}
				if len(pods) == 0 {
					delete(w.published, other)
				}
			}
		}
	}
	if len(w.published[id]) == 0 {
		delete(w.published, id)
	}
	if !w.staged[id] {
		delete(w.staged, id)
	}
}

// dirs are the pod volume directories a restart finds.
func (w *world) dirs() []PodVolumeDir {
	var out []PodVolumeDir
	for _, id := range sortedKeys(w.published) {
		for _, uid := range sortedKeys(w.published[id]) {
			v := w.volumes[id]
			out = append(out, PodVolumeDir{Pod: uid, Plugin: v.Plugin, Name: w.published[id][uid], Block: v.Block})
		}
	}
	return out
}

// worldReconstructor answers from the world; fail names pod/name pairs
// whose reconstruction fails.
type worldReconstructor struct {
	w    *world
	fail map[string]bool
}

func (r worldReconstructor) Reconstruct(_ context.Context, dir PodVolumeDir) (Reconstructed, error) {
	if r.fail[string(dir.Pod)+"/"+dir.Name] {
		return Reconstructed{}, errors.New("vol_data.json: no such file")
	}
	for id, pods := range r.w.published {
		if name, ok := pods[dir.Pod]; ok && name == dir.Name {
			return Reconstructed{Volume: r.w.volumes[id], Published: true, Staged: r.w.staged[id]}, nil
		}
	}
	return Reconstructed{}, fmt.Errorf("target of pod %s volume %s: %w", dir.Pod, dir.Name, ErrNotMounted)
}
