package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Waiting reasons reported through Options.Reasons.
const (
	ReasonCrashLoopBackOff     = "CrashLoopBackOff"
	ReasonErrImagePull         = "ErrImagePull"
	ReasonErrImageNeverPull    = "ErrImageNeverPull"
	ReasonCreateContainerError = "CreateContainerError"
	ReasonCreateConfigError    = "CreateContainerConfigError"
	ReasonRunContainerError    = "RunContainerError"
)

// SyncPod converges the pod toward its spec. It lists the pod's sandboxes
// and containers (ignoring status, which may be stale: only a fresh list
// rules out a duplicate after an uncertain call), computes the actions and
// performs them. It checks ctx immediately before each StartContainer and
// starts nothing once ctx is done.
//
// Errors of single containers do not stop the others; they are joined.
// A container in back-off gives a *BackOffError (ErrCrashLoopBackOff),
// which means "sync again after RetryAfter", not a failure of the pod.
// A pod without host network whose runtime reports NetworkReady false
// gives lifecycle.ErrNetworkNotReady before any sandbox is created.
//
// It waits while RemovePod removes the same UID (an old incarnation of a
// static pod re-added with its UID), so that it starts from what the
// removal left.
func (m *Manager) SyncPod(ctx context.Context, pod *v1.Pod, _ *lifecycle.PodStatus) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := m.locks.lock(ctx, pod.UID)
	if err != nil {
		return err
	}
	defer unlock()
	log := m.log.With("pod", pod.Namespace+"/"+pod.Name, "uid", string(pod.UID))
	st, err := m.podState(ctx, pod.UID)
	if err != nil {
		return err
	}
	now := m.clock.Now()
	var started func(name, id string) bool
	if m.opts.Probes != nil {
		started = func(name, id string) bool {
			s, _ := m.opts.Probes.ContainerProbes(pod, name, id)
			return s
		}
	}
	a := computeActions(pod, st, now, m.backoff.snapshot(pod.UID), started)
	m.backoff.record(pod.UID, a.records)

	if a.killPod {
		log.Info("killing pod before creating a new sandbox")
		if err := m.killState(ctx, pod, st, podGracePeriod(pod), time.Time{}); err != nil {
			return fmt.Errorf("killing pod before a new sandbox: %w", err)
		}
	}
	var errs []error
	for _, k := range a.kill {
		log.Info("stopping container", "container", k.name, "reason", k.reason)
		m.event(pod, lifecycle.EventNormal, EventKilling, "Stopping container %s: %s", k.name, k.reason)
		stop := func() error { return m.stopContainer(ctx, k.id, podGracePeriod(pod)) }
		switch {
		case k.restartAll:
			stop = func() error { return m.stopContainer(ctx, k.id, restartAllGrace) }
		case k.preStop:
			stop = func() error { return m.stopWithPreStop(ctx, pod, k.name, k.id, podIPOf(st), podGracePeriod(pod)) }
		}
		if err := stop(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range a.remove {
		if _, err := m.rt.RemoveContainer(ctx, &runtimev1.RemoveContainerRequest{ContainerId: id}); err != nil {
			errs = append(errs, callError("removing container "+id, err))
			continue
		}
		m.cutStarts.drop(id)
		m.resized.forget(id)
	}
	if len(errs) > 0 {
		// Start nothing next to a container that may still run.
		return errors.Join(errs...)
	}
	if err := m.resize(ctx, pod, &a); err != nil {
		errs = append(errs, err)
	}

	sbCfg := m.sandboxConfig(pod, a.sandboxAttempt)
	sandboxID, podIP := a.sandboxID, ""
	if sb := st.newestSandbox(); sb != nil && sb.id == sandboxID {
		podIP = sb.ip
	}
	if a.createSandbox {
		if sandboxID, podIP, err = m.createSandbox(ctx, pod, sbCfg); err != nil {
			return err
		}
		log.Info("created sandbox", "sandbox", sandboxID, "attempt", a.sandboxAttempt)
	}
	if sandboxID == "" {
		return nil // nothing may run: the pod is done
	}
	if len(a.start) > 0 {
		if err := os.MkdirAll(sbCfg.GetLogDirectory(), 0o755); err != nil {
			return fmt.Errorf("creating pod log directory: %w", err)
		}
	}
	for _, s := range a.start {
		err := m.startContainer(ctx, pod, sandboxID, sbCfg, podIP, s)
		if err != nil {
			log.Warn("starting container failed", "container", s.spec.Name, "err", err)
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		log.Info("started container", "container", s.spec.Name, "attempt", s.attempt, "reason", s.reason)
	}
	for _, w := range a.waiting {
		e := &BackOffError{Container: w.name, Delay: w.delay, Until: w.until, now: now}
		m.setReason(pod, w.name, ReasonCrashLoopBackOff, fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", w.delay, w.name, pod.Name, pod.Namespace, pod.UID))
		m.event(pod, lifecycle.EventWarning, EventBackOff, "Back-off restarting failed container %s in pod %s_%s(%s)", w.name, pod.Name, pod.Namespace, pod.UID)
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// createSandbox checks the network (unless host network) and runs the
// sandbox. After an uncertain error the sandbox may exist: the next sync
// lists it and uses it, so RunSandbox is never repeated blindly.
func (m *Manager) createSandbox(ctx context.Context, pod *v1.Pod, cfg *runtimev1.SandboxConfig) (id, ip string, err error) {
	if !pod.Spec.HostNetwork {
		if _, err := m.kernelHostname(pod); err != nil {
			return "", "", err
		}
		if err := m.networkReady(ctx); err != nil {
			return "", "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(cfg.GetLogDirectory(), 0o755); err != nil {
		return "", "", fmt.Errorf("creating pod log directory: %w", err)
	}
	resp, err := m.rt.RunSandbox(ctx, &runtimev1.RunSandboxRequest{Config: cfg, RuntimeHandler: runtimeHandler(pod)})
	if err != nil {
		return "", "", callError("running sandbox", err)
	}
	id = resp.GetSandboxId()
	st, err := m.rt.SandboxStatus(ctx, &runtimev1.SandboxStatusRequest{SandboxId: id})
	if err != nil {
		// The sandbox exists; its IP is only needed for status.podIP.
		m.log.Warn("reading new sandbox status", "pod", pod.Namespace+"/"+pod.Name, "uid", string(pod.UID), "err", callError("sandbox status", err))
		return id, "", nil
	}
	return id, st.GetSandbox().GetIp(), nil
}

// runtimeHandler is the pod's runtime class name, empty for the default.
func runtimeHandler(pod *v1.Pod) string {
	if pod.Spec.RuntimeClassName != nil {
		return *pod.Spec.RuntimeClassName
	}
	return ""
}

// networkReady asks the runtime whether the pod network is ready.
func (m *Manager) networkReady(ctx context.Context) error {
	resp, err := m.rt.Status(ctx, &runtimev1.StatusRequest{})
	if err != nil {
		return callError("runtime status", err)
	}
	for _, c := range resp.GetConditions() {
		if c.GetType() == "NetworkReady" && !c.GetStatus() {
			return fmt.Errorf("runtime network: %s %s: %w", c.GetReason(), c.GetMessage(), lifecycle.ErrNetworkNotReady)
		}
	}
	return nil
}

// startContainer pulls the image, creates the container (unless s names
// a created one) and starts it, checking ctx right before the start.
func (m *Manager) startContainer(ctx context.Context, pod *v1.Pod, sandboxID string, sbCfg *runtimev1.SandboxConfig, podIP string, s startAction) error {
	name := s.spec.Name
	id := s.existingID
	if id == "" {
		policy := pullPolicy(s.spec)
		var img *runtimev1.EnsureImageResponse
		auth, missingSecrets, err := m.pullAuth(ctx, pod, s.spec.Image)
		if err == nil {
			img, err = m.rt.EnsureImage(ctx, &runtimev1.EnsureImageRequest{Image: s.spec.Image, PullPolicy: policy, Auth: auth})
			if err != nil {
				err = callError("ensuring image "+s.spec.Image, err)
			}
		}
		if err != nil {
			reason := ReasonErrImagePull
			if policy == runtimev1.PullPolicy_PULL_POLICY_NEVER {
				reason = ReasonErrImageNeverPull
			}
			m.setReason(pod, name, reason, err.Error())
			m.event(pod, lifecycle.EventWarning, EventFailed, "Failed to pull image %q: %v", s.spec.Image, err)
			m.missingPullSecretsEvent(pod, missingSecrets)
			return fmt.Errorf("container %q: %w: %w", name, ErrImagePull, err)
		}
		m.imageEvent(pod, s.spec.Image, img)
		image, err := m.imageUser(ctx, pod, s.spec, img.GetImageRef())
		if err == nil {
			err = verifyNonRoot(pod, s.spec, image)
		}
		if err != nil {
			m.setReason(pod, name, ReasonCreateConfigError, err.Error())
			m.event(pod, lifecycle.EventWarning, EventFailed, "Error: %v", err)
			return fmt.Errorf("container %q: %w: %w", name, ErrContainerConfig, err)
		}
		cfg, err := m.containerConfig(ctx, pod, s.spec, s.kind, s.attempt, img.GetImageRef(), podIP)
		if err == nil {
			runAnnotation(cfg.Annotations, s.run)
			cfg.Security = m.containerSecurity(pod, s.spec)
			imageUser(cfg.Security, image)
			cfg.TargetContainerId = s.targetID
			if s.target != "" && s.targetID == "" {
				err = fmt.Errorf("unable to find target container %s", s.target)
			}
		}
		if err != nil {
			m.setReason(pod, name, ReasonCreateConfigError, err.Error())
			m.event(pod, lifecycle.EventWarning, EventFailed, "Error: %v", err)
			return fmt.Errorf("container %q: %w", name, err)
		}
		if err := os.MkdirAll(filepath.Join(sbCfg.GetLogDirectory(), name), 0o755); err != nil {
			return fmt.Errorf("container %q: creating log directory: %w", name, err)
		}
		mount, err := m.terminationMessageMount(pod, s.spec, s.attempt)
		if err != nil {
			m.setReason(pod, name, ReasonCreateContainerError, err.Error())
			m.event(pod, lifecycle.EventWarning, EventFailed, "Error: %v", err)
			return fmt.Errorf("container %q: %w", name, err)
		}
		if mount != nil {
			cfg.Mounts = append(cfg.Mounts, mount)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := m.rt.CreateContainer(ctx, &runtimev1.CreateContainerRequest{SandboxId: sandboxID, Config: cfg, SandboxConfig: sbCfg})
		if err != nil {
			err = callError("creating container "+name, err)
			m.setReason(pod, name, ReasonCreateContainerError, err.Error())
			m.event(pod, lifecycle.EventWarning, EventFailed, "Error: %v", err)
			return err
		}
		id = resp.GetContainerId()
		m.event(pod, lifecycle.EventNormal, EventCreated, "Created container %s", name)
	}
	// The lifecycle's hard rule: no start once ctx is done.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("container %q not started: %w", name, err)
	}
	if _, err := m.rt.StartContainer(ctx, &runtimev1.StartContainerRequest{ContainerId: id}); err != nil {
		if cutByPluginDeath(err) {
			// Not a failure of the container; the next sync finds out
			// what became of it.
			m.cutStarts.add(pod.UID, id)
			return callError("starting container "+name, err)
		}
		err = callError("starting container "+name, err)
		m.setReason(pod, name, ReasonRunContainerError, err.Error())
		m.event(pod, lifecycle.EventWarning, EventFailed, "Error: %v", err)
		return err
	}
	m.event(pod, lifecycle.EventNormal, EventStarted, "Started container %s", name)
	if m.opts.Reasons != nil {
		m.opts.Reasons.Remove(pod.UID, name)
	}
	return m.postStart(ctx, pod, s.spec, id, podIP)
}

func (m *Manager) setReason(pod *v1.Pod, container, reason, message string) {
	if m.opts.Reasons != nil {
		m.opts.Reasons.Add(pod.UID, container, lifecycle.StartFailure{Reason: reason, Message: message})
	}
}

// imageUser reads the user of the container's image when runAsNonRoot is
// to be verified against it or a group needs a user; nil otherwise.
func (m *Manager) imageUser(ctx context.Context, pod *v1.Pod, spec *v1.Container, ref string) (*runtimev1.Image, error) {
	if !needsImageUser(pod, spec) {
		return nil, nil
	}
	st, err := m.rt.ImageStatus(ctx, &runtimev1.ImageStatusRequest{Image: ref})
	if err != nil {
		return nil, callError("reading the user of image "+ref, err)
	}
	if !st.GetPresent() {
		return nil, fmt.Errorf("image %s is not present to read its user", ref)
	}
	return st.GetImage(), nil
}
