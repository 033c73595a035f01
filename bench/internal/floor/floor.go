// Package floor measures the floor for podhost's pod benchmarks: the
// latency of the bare CRI calls a node agent makes, issued straight to
// containerd with no agent in between. For each pod (host network, one
// busybox container that exits on SIGTERM, grace period 5 s) it times
//
//	start:    RunPodSandbox → CreateContainer → StartContainer returned
//	stop:     StopContainer(timeout 5) returned
//	teardown: StopPodSandbox + RemovePodSandbox
//
// running Options.Parallel pods at a time in each phase. bench/crifloor runs
// it alone; bench/podstart runs it next to the host on the same containerd.
// They are the only packages that import it.
package floor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/bench/internal/stats"
)

// TrapScript runs until SIGTERM and then exits 0. The shell runs the trap
// after the foreground sleep ends, so a stop takes up to 0.1 s longer.
// bench/podstart gives the host the very same script.
const TrapScript = `trap "exit 0" TERM; while true; do sleep 0.1; done`

// BenchLabel = BenchLabelValue marks the floor's sandboxes and containers.
const (
	BenchLabel      = "podhost.io/bench"
	BenchLabelValue = "crifloor"
)

// ContainerName is the name of the pod's one container.
const ContainerName = "main"

// GracePeriod is the pod's grace period: the StopContainer timeout here and
// terminationGracePeriodSeconds in bench/podstart.
const GracePeriod = 5 * time.Second

// Options says what to measure.
type Options struct {
	Pods     int
	Parallel int // pods in flight at a time in each phase
	Image    string
	Grace    time.Duration // StopContainer timeout
	LogDir   string        // CRI log directory of the pods
	// Probe, when set, runs from the start of the stop phase to the end of
	// the teardown: a harness that watches its own agent's deletes by
	// polling CRI gives the floor the same load (it returns the function
	// that ends it).
	Probe func(ctx context.Context) (end func())
}

// Pod is one benchmark pod and its timings.
type Pod struct {
	Index       int
	Config      *runtimeapi.PodSandboxConfig
	SandboxID   string
	ContainerID string
	Start       time.Duration
	Sandbox     time.Duration // the RunPodSandbox part of Start
	Stop        time.Duration
	StopErr     error // StopContainer failed but the container exited
	Teardown    time.Duration
}

// Phase is one timed step applied to every pod.
type Phase struct {
	Name string
	step func(ctx context.Context, p *Pod) error
	Wall time.Duration
}

// Results are the timings of one Measure.
type Results struct {
	Options Options
	Pods    []*Pod
	Phases  []*Phase
}

// CheckImage fails unless the image is in containerd.
func CheckImage(ctx context.Context, img runtimeapi.ImageServiceClient, image string) error {
	resp, err := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return fmt.Errorf("image status %s: %w", image, err)
	}
	if resp.GetImage() == nil {
		return fmt.Errorf("image %s is not in containerd (import it; hack/containerd-up.sh does)", image)
	}
	return nil
}

// Measure starts, stops and tears down o.Pods pods, o.Parallel at a time,
// and removes whatever it created even when it fails.
func Measure(ctx context.Context, rt runtimeapi.RuntimeServiceClient, o Options) (*Results, error) {
	if o.Pods < 1 || o.Parallel < 1 {
		return nil, fmt.Errorf("pods and parallel must be at least 1")
	}
	if o.Grace == 0 {
		o.Grace = GracePeriod
	}
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	pods := make([]*Pod, o.Pods)
	for i := range pods {
		pods[i] = &Pod{Index: i, Config: SandboxConfig(run, i, o.LogDir)}
	}
	// Whatever happens, remove what was created.
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for _, p := range pods {
			if p.SandboxID == "" {
				continue
			}
			_, _ = rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.SandboxID})
			_, _ = rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.SandboxID})
		}
	}()

	phases := []*Phase{
		{Name: "start", step: func(ctx context.Context, p *Pod) error {
			t0 := time.Now()
			sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: p.Config})
			if err != nil {
				return fmt.Errorf("run sandbox: %w", err)
			}
			p.SandboxID = sb.PodSandboxId
			p.Sandbox = time.Since(t0)
			c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
				PodSandboxId:  p.SandboxID,
				Config:        ContainerConfig(o.Image),
				SandboxConfig: p.Config,
			})
			if err != nil {
				return fmt.Errorf("create container: %w", err)
			}
			p.ContainerID = c.ContainerId
			if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: p.ContainerID}); err != nil {
				return fmt.Errorf("start container: %w", err)
			}
			p.Start = time.Since(t0)
			return nil
		}},
		{Name: "check", step: func(ctx context.Context, p *Pod) error {
			st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: p.ContainerID})
			if err != nil {
				return fmt.Errorf("container status: %w", err)
			}
			if st.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
				return fmt.Errorf("container %s is %v, want running", p.ContainerID, st.Status.State)
			}
			return nil
		}},
		{Name: "stop", step: func(ctx context.Context, p *Pod) error {
			t0 := time.Now()
			_, stopErr := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: p.ContainerID, Timeout: int64(o.Grace / time.Second)})
			p.Stop = time.Since(t0)
			st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: p.ContainerID})
			if err != nil {
				return fmt.Errorf("container status: %w", err)
			}
			if stopErr != nil {
				// containerd 1.6 may fail StopContainer with "ttrpc: closed"
				// when the container exits while it kills it; the container
				// is stopped all the same. Count it, fail on anything else.
				if st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED {
					return fmt.Errorf("stop container: %w", stopErr)
				}
				p.StopErr = stopErr
			}
			// 0 is the trap's exit; 143 a SIGTERM that came before the
			// shell set the trap (a loaded machine starts it late). Either
			// way SIGTERM stopped it; 137 would be the kill after the grace.
			if st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED || (st.Status.ExitCode != 0 && st.Status.ExitCode != 143) {
				return fmt.Errorf("container %s after stop: %v, exit code %d, want exited 0 (or 143, SIGTERM before the trap)", p.ContainerID, st.Status.State, st.Status.ExitCode)
			}
			return nil
		}},
		{Name: "teardown", step: func(ctx context.Context, p *Pod) error {
			t0 := time.Now()
			if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.SandboxID}); err != nil {
				return fmt.Errorf("stop sandbox: %w", err)
			}
			if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.SandboxID}); err != nil {
				return fmt.Errorf("remove sandbox: %w", err)
			}
			p.SandboxID = ""
			p.Teardown = time.Since(t0)
			return nil
		}},
	}
	endProbe := func() {}
	defer func() { endProbe() }()
	for _, ph := range phases {
		if ph.Name == "stop" && o.Probe != nil {
			endProbe = o.Probe(ctx)
		}
		t0 := time.Now()
		if err := forEach(ctx, pods, o.Parallel, ph.step); err != nil {
			return nil, fmt.Errorf("phase %s: %w", ph.Name, err)
		}
		ph.Wall = time.Since(t0)
		if ph.Name == "teardown" {
			endProbe()
			endProbe = func() {}
		}
	}
	return &Results{Options: o, Pods: pods, Phases: phases}, nil
}

// forEach runs step for every pod, at most parallel at a time, and returns
// the first errors.
func forEach(ctx context.Context, pods []*Pod, parallel int, step func(context.Context, *Pod) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *Pod)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range parallel {
		wg.Go(func() {
			for p := range work {
				if err := step(ctx, p); err != nil {
					if errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled {
						continue // another pod failed first
					}
					mu.Lock()
					errs = append(errs, fmt.Errorf("pod %d: %w", p.Index, err))
					mu.Unlock()
					cancel()
				}
			}
		})
	}
	for _, p := range pods {
		if ctx.Err() != nil {
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// SandboxConfig is the sandbox of floor pod i of a run: host network.
func SandboxConfig(run string, i int, logDir string) *runtimeapi.PodSandboxConfig {
	name := fmt.Sprintf("floor-%d", i)
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name:      name,
			Namespace: "crifloor",
			Uid:       fmt.Sprintf("crifloor-%s-%d", run, i),
		},
		LogDirectory: filepath.Join(logDir, name),
		Labels:       map[string]string{BenchLabel: BenchLabelValue},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: runtimeapi.NamespaceMode_NODE,
					Pid:     runtimeapi.NamespaceMode_CONTAINER,
					Ipc:     runtimeapi.NamespaceMode_POD,
				},
			},
		},
	}
}

// ContainerConfig is the pod's one container: sh -c TrapScript.
func ContainerConfig(image string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: ContainerName},
		Labels:   map[string]string{BenchLabel: BenchLabelValue},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Command:  []string{"sh", "-c", TrapScript},
		LogPath:  ContainerName + "/0.log",
	}
}

// Durations returns one timing of every pod.
func (r *Results) Durations(get func(*Pod) time.Duration) []time.Duration {
	ds := make([]time.Duration, len(r.Pods))
	for i, p := range r.Pods {
		ds[i] = get(p)
	}
	return ds
}

// The timings of a pod, for Durations.
var (
	StartTime    = func(p *Pod) time.Duration { return p.Start }
	SandboxTime  = func(p *Pod) time.Duration { return p.Sandbox }
	StopTime     = func(p *Pod) time.Duration { return p.Stop }
	TeardownTime = func(p *Pod) time.Duration { return p.Teardown }
	// StopTeardownTime is StopContainer through RemovePodSandbox, the
	// floor of delete → sandbox removed.
	StopTeardownTime = func(p *Pod) time.Duration { return p.Stop + p.Teardown }
)

// Table is the results as a markdown table.
func (r *Results) Table() string {
	var b strings.Builder
	b.WriteString("| phase | n | p50 | p75 | p90 | p99 | max | phase wall |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	wall := map[string]time.Duration{}
	for _, ph := range r.Phases {
		wall[ph.Name] = ph.Wall
	}
	rows := []struct {
		name, phase string
		get         func(*Pod) time.Duration
	}{
		{"RunPodSandbox → container started", "start", StartTime},
		{"RunPodSandbox alone", "start", SandboxTime},
		{"StopContainer(5 s) → stopped", "stop", StopTime},
		{"StopPodSandbox + RemovePodSandbox", "teardown", TeardownTime},
	}
	for _, row := range rows {
		s := stats.Summarize(r.Durations(row.get))
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", row.name, s.N,
			stats.MS(s.P50), stats.MS(s.P75), stats.MS(s.P90), stats.MS(s.P99), stats.MS(s.Max), stats.MS(wall[row.phase]))
	}
	b.WriteString(r.StopErrors())
	return b.String()
}

// StopErrors lists the pods whose StopContainer failed although the
// container exited, one line each, or "".
func (r *Results) StopErrors() string {
	var b strings.Builder
	for _, p := range r.Pods {
		if p.StopErr != nil {
			fmt.Fprintf(&b, "\npod %d: StopContainer failed although the container exited: %v\n", p.Index, p.StopErr)
		}
	}
	return b.String()
}
