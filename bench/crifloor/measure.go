package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// trapScript runs until SIGTERM and then exits 0. The shell runs the trap
// after the foreground sleep ends, so a stop takes up to 0.1 s longer.
const trapScript = `trap "exit 0" TERM; while true; do sleep 0.1; done`

// pod is one benchmark pod and its timings.
type pod struct {
	index       int
	config      *runtimeapi.PodSandboxConfig
	sandboxID   string
	containerID string
	start       time.Duration
	sandbox     time.Duration // the RunPodSandbox part of start
	stop        time.Duration
	stopErr     error // StopContainer failed but the container exited
	teardown    time.Duration
}

// phase is one timed step applied to every pod.
type phase struct {
	name string
	step func(ctx context.Context, p *pod) (time.Duration, error)
	wall time.Duration
}

type results struct {
	pods   []*pod
	phases []*phase
}

func measure(ctx context.Context, rt runtimeapi.RuntimeServiceClient, o options) (*results, error) {
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	pods := make([]*pod, o.pods)
	for i := range pods {
		pods[i] = &pod{index: i, config: sandboxConfig(run, i, o.logDir)}
	}
	// Whatever happens, remove what was created.
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for _, p := range pods {
			if p.sandboxID == "" {
				continue
			}
			_, _ = rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.sandboxID})
			_, _ = rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.sandboxID})
		}
	}()

	phases := []*phase{
		{name: "start", step: func(ctx context.Context, p *pod) (time.Duration, error) {
			t0 := time.Now()
			sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: p.config})
			if err != nil {
				return 0, fmt.Errorf("run sandbox: %w", err)
			}
			p.sandboxID = sb.PodSandboxId
			p.sandbox = time.Since(t0)
			c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
				PodSandboxId:  p.sandboxID,
				Config:        containerConfig(o.image),
				SandboxConfig: p.config,
			})
			if err != nil {
				return 0, fmt.Errorf("create container: %w", err)
			}
			p.containerID = c.ContainerId
			if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: p.containerID}); err != nil {
				return 0, fmt.Errorf("start container: %w", err)
			}
			p.start = time.Since(t0)
			return p.start, nil
		}},
		{name: "check", step: func(ctx context.Context, p *pod) (time.Duration, error) {
			st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: p.containerID})
			if err != nil {
				return 0, fmt.Errorf("container status: %w", err)
			}
			if st.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
				return 0, fmt.Errorf("container %s is %v, want running", p.containerID, st.Status.State)
			}
			return 0, nil
		}},
		{name: "stop", step: func(ctx context.Context, p *pod) (time.Duration, error) {
			t0 := time.Now()
			_, stopErr := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: p.containerID, Timeout: int64(o.grace / time.Second)})
			p.stop = time.Since(t0)
			st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: p.containerID})
			if err != nil {
				return 0, fmt.Errorf("container status: %w", err)
			}
			if stopErr != nil {
				// containerd 1.6 may fail StopContainer with "ttrpc: closed"
				// when the container exits while it kills it; the container
				// is stopped all the same. Count it, fail on anything else.
				if st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED {
					return 0, fmt.Errorf("stop container: %w", stopErr)
				}
				p.stopErr = stopErr
			}
			if st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.Status.ExitCode != 0 {
				return 0, fmt.Errorf("container %s after stop: %v, exit code %d, want exited 0", p.containerID, st.Status.State, st.Status.ExitCode)
			}
			return p.stop, nil
		}},
		{name: "teardown", step: func(ctx context.Context, p *pod) (time.Duration, error) {
			t0 := time.Now()
			if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.sandboxID}); err != nil {
				return 0, fmt.Errorf("stop sandbox: %w", err)
			}
			if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.sandboxID}); err != nil {
				return 0, fmt.Errorf("remove sandbox: %w", err)
			}
			p.sandboxID = ""
			p.teardown = time.Since(t0)
			return p.teardown, nil
		}},
	}
	for _, ph := range phases {
		t0 := time.Now()
		if err := forEach(ctx, pods, o.parallel, ph.step); err != nil {
			return nil, fmt.Errorf("phase %s: %w", ph.name, err)
		}
		ph.wall = time.Since(t0)
	}
	return &results{pods: pods, phases: phases}, nil
}

// forEach runs step for every pod, at most parallel at a time, and returns
// the first errors.
func forEach(ctx context.Context, pods []*pod, parallel int, step func(context.Context, *pod) (time.Duration, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *pod)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range parallel {
		wg.Go(func() {
			for p := range work {
				if _, err := step(ctx, p); err != nil {
					if errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled {
						continue // another pod failed first
					}
					mu.Lock()
					errs = append(errs, fmt.Errorf("pod %d: %w", p.index, err))
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

func sandboxConfig(run string, i int, logDir string) *runtimeapi.PodSandboxConfig {
	name := fmt.Sprintf("floor-%d", i)
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name:      name,
			Namespace: "crifloor",
			Uid:       fmt.Sprintf("crifloor-%s-%d", run, i),
		},
		LogDirectory: filepath.Join(logDir, name),
		Labels:       map[string]string{"podhost.io/bench": "crifloor"},
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

func containerConfig(image string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "main"},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Command:  []string{"sh", "-c", trapScript},
		LogPath:  "main/0.log",
	}
}

// percentile returns the nearest-rank q-th percentile of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q/100*float64(len(sorted)) + 0.999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func (r *results) table() string {
	var b strings.Builder
	b.WriteString("| phase | n | p50 | p75 | p90 | p99 | max | phase wall |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	wall := map[string]time.Duration{}
	for _, ph := range r.phases {
		wall[ph.name] = ph.wall
	}
	rows := []struct {
		name, phase string
		get         func(*pod) time.Duration
	}{
		{"RunPodSandbox → container started", "start", func(p *pod) time.Duration { return p.start }},
		{"RunPodSandbox alone", "start", func(p *pod) time.Duration { return p.sandbox }},
		{"StopContainer(5 s) → stopped", "stop", func(p *pod) time.Duration { return p.stop }},
		{"StopPodSandbox + RemovePodSandbox", "teardown", func(p *pod) time.Duration { return p.teardown }},
	}
	for _, row := range rows {
		ds := make([]time.Duration, len(r.pods))
		for i, p := range r.pods {
			ds[i] = row.get(p)
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", row.name, len(ds),
			ms(percentile(ds, 50)), ms(percentile(ds, 75)), ms(percentile(ds, 90)),
			ms(percentile(ds, 99)), ms(ds[len(ds)-1]), ms(wall[row.phase]))
	}
	for _, p := range r.pods {
		if p.stopErr != nil {
			fmt.Fprintf(&b, "\npod %d: StopContainer failed although the container exited: %v\n", p.index, p.stopErr)
		}
	}
	return b.String()
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
