package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/hostproc"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/test/crisetup"
)

const namespace = "default"

// probeCommand leaves one file per execution in /ts, a hostPath directory
// of the container: its time is when the command ran.
var probeCommand = []string{"sh", "-c", "mktemp -p /ts >/dev/null"}

// bench holds what both phases use.
type bench struct {
	o    options
	dir  string
	ctrd *crisetup.Containerd
	host *hostproc.Host
}

// target is one probed container.
type target struct {
	pod, container string
	// tsDir is the host side of its /ts.
	tsDir string
	// id is its CRI container ID, once it runs.
	id string
}

// targets are the containers of a phase's pods, in pod and container
// order.
func (b *bench) targets(phase string) []*target {
	var out []*target
	for p := range b.o.pods {
		for c := range b.o.containers {
			pod, ctr := fmt.Sprintf("%s-%02d", phase, p), fmt.Sprintf("c%02d", c)
			out = append(out, &target{pod: pod, container: ctr, tsDir: filepath.Join(b.dir, "ts", pod, ctr)})
		}
	}
	return out
}

// manifest is the pod of the targets named pod: host network, each
// container running floor.TrapScript with its /ts, and with probe the
// exec readiness probe of probeCommand.
func (b *bench) manifest(pod string, ts []*target, probe bool) []byte {
	grace := int64(1)
	spec := v1.PodSpec{HostNetwork: true, TerminationGracePeriodSeconds: &grace}
	dirOrCreate := v1.HostPathDirectoryOrCreate
	for _, t := range ts {
		if t.pod != pod {
			continue
		}
		c := v1.Container{
			Name: t.container, Image: localimages.BusyboxName, ImagePullPolicy: v1.PullNever,
			Command:      []string{"sh", "-c", floor.TrapScript},
			VolumeMounts: []v1.VolumeMount{{Name: t.container, MountPath: "/ts"}},
		}
		if probe {
			c.ReadinessProbe = &v1.Probe{
				ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: probeCommand}},
				PeriodSeconds: int32(b.o.period / time.Second), TimeoutSeconds: 1,
			}
		}
		spec.Containers = append(spec.Containers, c)
		spec.Volumes = append(spec.Volumes, v1.Volume{Name: t.container,
			VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: t.tsDir, Type: &dirOrCreate}}})
	}
	body, err := json.Marshal(&v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: namespace},
		Spec:       spec,
	})
	if err != nil {
		panic(err)
	}
	return body
}

// podNames are the distinct pods of the targets, in order.
func podNames(ts []*target) []string {
	var out []string
	for _, t := range ts {
		if len(out) == 0 || out[len(out)-1] != t.pod {
			out = append(out, t.pod)
		}
	}
	return out
}

// applyAndWait applies the pods of the targets, waits until every
// container runs, and records the container IDs. It does not wait for
// readiness: on a loaded machine probes time out, which is a result.
func (b *bench) applyAndWait(ctx context.Context, ts []*target, probe bool) error {
	pods := podNames(ts)
	for _, pod := range pods {
		if _, err := b.host.Client.Apply(ctx, b.manifest(pod, ts, probe)); err != nil {
			return fmt.Errorf("apply %s: %w", pod, err)
		}
	}
	deadline := time.Now().Add(b.o.timeout)
	for {
		running, err := b.containerIDs(ctx, pods, ts)
		if err == nil && running == len(ts) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d containers running after %s (last error %v)", running, len(ts), b.o.timeout, err)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// containerIDs sets the ID of every target whose container runs and
// returns how many run.
func (b *bench) containerIDs(ctx context.Context, pods []string, ts []*target) (int, error) {
	running := 0
	for _, pod := range pods {
		d, err := b.host.Client.Pod(ctx, namespace, pod)
		if err != nil {
			return running, fmt.Errorf("pod %s: %w", pod, err)
		}
		for _, cs := range d.Pod.Status.ContainerStatuses {
			for _, t := range ts {
				if t.pod == pod && t.container == cs.Name && cs.State.Running != nil {
					t.id = cs.ContainerID
					running++
				}
			}
		}
	}
	return running, nil
}

// deleteAndWait deletes the targets' pods and waits until the host no
// longer lists them.
func (b *bench) deleteAndWait(ctx context.Context, ts []*target) error {
	names := map[string]bool{}
	for _, pod := range podNames(ts) {
		names[pod] = true
		if _, err := b.host.Client.Delete(ctx, namespace, pod, localapi.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s: %w", pod, err)
		}
	}
	deadline := time.Now().Add(b.o.timeout)
	for {
		left := 0
		sums, err := b.host.Client.Pods(ctx)
		for _, s := range sums {
			if names[s.Name] {
				left++
			}
		}
		if err == nil && left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d pods left %s after delete (last error %v)", left, b.o.timeout, err)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
