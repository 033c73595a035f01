package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// securityProbe prints what the kernel says of the process: its ids, its
// capabilities, no_new_privs and seccomp mode, a sysctl, and whether / is
// writable.
const securityProbe = `id; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; ` +
	`echo "shm_rmid_forced=$(cat /proc/sys/kernel/shm_rmid_forced)"; ` +
	`if touch /probe 2>/dev/null; then echo "rootfs=writable"; else echo "rootfs=read-only"; fi`

// logsOf returns the log of one container of a finished pod.
func (h *podHost) logsOf(pod, container string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 10*time.Second)
	defer cancel()
	out, err := h.hostCLI(ctx, "logs", "default/"+pod, "-c", container)
	if err != nil {
		h.t.Fatalf("logs of %s/%s: %v", pod, container, err)
	}
	return out
}

func wantLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q:\n%s", what, w, out)
		}
	}
}

// TestPodSecurityContext runs a pod whose securityContext asks for a user,
// groups, capabilities, no privilege escalation, a read-only root, a
// seccomp profile and a sysctl, and reads each fact from inside its
// containers.
func TestPodSecurityContext(t *testing.T) {
	h := startPodHost(t)
	pod := busyPod("confined", v1.RestartPolicyNever, sh("user", securityProbe), sh("root", securityProbe), sh("plain", securityProbe))
	pod.Spec.SecurityContext = &v1.PodSecurityContext{
		RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000), SupplementalGroups: []int64{4000},
		Sysctls:        []v1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}},
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
	}
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
	}
	// Root in the container, with only the capability it is given.
	pod.Spec.Containers[1].SecurityContext = &v1.SecurityContext{
		RunAsUser: ptr.To[int64](0), RunAsGroup: ptr.To[int64](0),
		Capabilities:   &v1.Capabilities{Drop: []v1.Capability{"ALL"}, Add: []v1.Capability{"NET_BIND_SERVICE"}},
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined},
	}
	h.apply(pod)
	h.waitPhase("confined", v1.PodSucceeded, 90*time.Second)

	wantLines(t, "user container", h.logsOf("confined", "user"),
		"uid=1000", "gid=3000", "4000", "NoNewPrivs:\t1", "Seccomp:\t2", "CapEff:\t0000000000000000",
		"shm_rmid_forced=1", "rootfs=read-only")
	wantLines(t, "root container", h.logsOf("confined", "root"),
		"uid=0 gid=0", "NoNewPrivs:\t0", "Seccomp:\t0",
		"CapEff:\t0000000000000400", // CAP_NET_BIND_SERVICE (bit 10) alone
		"rootfs=writable")
	wantLines(t, "plain container", h.logsOf("confined", "plain"), "uid=1000", "Seccomp:\t2", "NoNewPrivs:\t0")
}

// TestPodProcessNamespace: without shareProcessNamespace a container sees
// only its own processes; with it, its neighbours' (and the pause
// process).
func TestPodProcessNamespace(t *testing.T) {
	h := startPodHost(t)
	const script = `sleep 30 & sleep 1; ps -o comm | grep -c -x sleep; echo "pid1=$(cat /proc/1/comm)"`
	alone := busyPod("alone", v1.RestartPolicyNever, sh("a", script), sh("b", "exec sleep 20"))
	shared := busyPod("shared", v1.RestartPolicyNever, sh("a", script), sh("b", "exec sleep 20"))
	shared.Spec.ShareProcessNamespace = ptr.To(true)
	h.apply(alone)
	h.apply(shared)
	h.waitPod("alone", 90*time.Second, "container a exited", exited("a"))
	h.waitPod("shared", 90*time.Second, "container a exited", exited("a"))
	wantLines(t, "alone", h.logsOf("alone", "a"), "1\n", "pid1=sh")
	wantLines(t, "shared", h.logsOf("shared", "a"), "2\n", "pid1=pause")
}

func exited(name string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		cs := containerStatus(p, name)
		return cs != nil && cs.State.Terminated != nil
	}
}

// TestPodSecurityRefused: runAsNonRoot with an image that runs as root is
// refused before the container is created, with the kubelet's reason and
// message; bad securityContext input is refused naming the field (by the
// local API at the request; a sysctl the node does not allow and a missing
// Localhost seccomp profile at admission, the pod Failed with the
// reason), and a pod already running is untouched by all of it.
func TestPodSecurityRefused(t *testing.T) {
	h := startPodHostWith(t, "allowedUnsafeSysctls: [\"kernel.msg*\"]\n")
	good := busyPod("good", v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
	h.apply(good)
	goodPod, goodID := h.runningContainerID("good", 60*time.Second)

	nonRoot := busyPod("nonroot", v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
	nonRoot.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	h.apply(nonRoot)
	p := h.waitPod("nonroot", 60*time.Second, "waiting with CreateContainerConfigError", func(p *v1.Pod) bool {
		cs := containerStatus(p, "app")
		return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError"
	})
	msg := containerStatus(p, "app").State.Waiting.Message
	wantLines(t, "runAsNonRoot refusal", msg, "container has runAsNonRoot and image will run as root", `pod: "nonroot_default(`, "container: app)")
	if n := len(h.criContainers(string(p.UID))); n != 0 {
		t.Errorf("containerd has %d containers of the pod refused for runAsNonRoot; want none created", n)
	}

	// Allowed by the host config: an unsafe sysctl the node allows runs.
	allowed := busyPod("msgmax", v1.RestartPolicyNever, sh("app", "cat /proc/sys/kernel/msgmax"))
	allowed.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "12345"}}}
	h.apply(allowed)
	h.waitPhase("msgmax", v1.PodSucceeded, 60*time.Second)
	wantLines(t, "allowed unsafe sysctl", h.logsOf("msgmax", "app"), "12345")

	invalid := []struct {
		name, field string
		mutate      func(p *v1.Pod)
	}{
		{"bad-cap", "spec.containers[0].securityContext.capabilities.add[0]", func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Capabilities: &v1.Capabilities{Add: []v1.Capability{"FLY"}}}
		}},
		{"bad-uid", "spec.securityContext.runAsUser", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To[int64](-1)}
		}},
		{"apparmor", "spec.securityContext.appArmorProfile", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}
		}},
	}
	// The local API refuses them at the request, naming the field.
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			pod := busyPod(c.name, v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
			c.mutate(pod)
			b, err := json.Marshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.client.Apply(t.Context(), b)
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Errorf("apply %s: %v; want a refusal naming %s", c.name, err, c.field)
			}
		})
	}

	atAdmission := []struct {
		name, reason, inMsg string
		mutate              func(p *v1.Pod)
	}{
		{"bad-sysctl", "SysctlForbidden", "spec.securityContext.sysctls[0]: kernel.sem", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.sem", Value: "1 1 1 1"}}}
		}},
		{"bad-seccomp", "SeccompProfileNotFound", `spec.containers[0].securityContext.seccompProfile.localhostProfile "missing.json"`, func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{
				Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("missing.json")}}
		}},
	}
	for _, c := range atAdmission {
		pod := busyPod(c.name, v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
		c.mutate(pod)
		h.apply(pod)
	}
	for _, c := range atAdmission {
		t.Run(c.name, func(t *testing.T) {
			p := h.waitPod(c.name, 30*time.Second, "failed with "+c.reason, func(p *v1.Pod) bool {
				return p.Status.Phase == v1.PodFailed && p.Status.Reason == c.reason
			})
			wantLines(t, c.name, p.Status.Message, c.inMsg)
		})
	}

	t.Run("the running pod is untouched", func(t *testing.T) {
		now := h.waitPod("good", 10*time.Second, "running", running)
		cs := now.Status.ContainerStatuses[0]
		if now.UID != goodPod.UID || cs.ContainerID != goodID || cs.RestartCount != 0 {
			t.Errorf("good pod disturbed: uid %s→%s, container %s→%s, restarts %d", goodPod.UID, now.UID, goodID, cs.ContainerID, cs.RestartCount)
		}
	})
}

// TestPodSeccompLocalhost runs a container with a Localhost profile from
// the node's profile directory that makes mkdir fail with EPERM.
func TestPodSeccompLocalhost(t *testing.T) {
	dir := t.TempDir()
	profile := `{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}`
	if err := os.WriteFile(filepath.Join(dir, "no-mkdir.json"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startPodHostWith(t, "seccompProfileRoot: "+dir+"\n")
	pod := busyPod("nomkdir", v1.RestartPolicyNever, sh("app", `grep Seccomp: /proc/self/status; mkdir /tmp/x 2>&1 || echo mkdir-refused`))
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{
		Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("no-mkdir.json")}}
	h.apply(pod)
	h.waitPhase("nomkdir", v1.PodSucceeded, 60*time.Second)
	wantLines(t, "localhost profile", h.logsOf("nomkdir", "app"), "Seccomp:\t2", "mkdir-refused")
}
