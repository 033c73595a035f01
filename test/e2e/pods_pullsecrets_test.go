package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// pullSecretManifest is a dockerconfigjson Secret named name whose one
// entry, for host, carries user and password as docker writes them (the
// base64 "auth" field).
func pullSecretManifest(name, host, user, password string) string {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s}\ntype: kubernetes.io/dockerconfigjson\n"+
		"stringData:\n  .dockerconfigjson: '{\"auths\": {\"%s\": {\"auth\": \"%s\"}}}'\n", name, host, auth)
}

// privatePod runs image (pulled Always) printing a line, with secrets as
// its imagePullSecrets.
func privatePod(name, image string, secrets ...string) *v1.Pod {
	p := busyPod(name, v1.RestartPolicyAlways, sh("main", "echo pulled-and-running; sleep 3600"))
	p.Spec.Containers[0].Image = image
	p.Spec.Containers[0].ImagePullPolicy = v1.PullAlways
	for _, s := range secrets {
		p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: s})
	}
	zero := int64(0)
	p.Spec.TerminationGracePeriodSeconds = &zero
	return p
}

// pullFailed reports whether the container waits with ErrImagePull or
// ImagePullBackOff and a message.
func pullFailed(p *v1.Pod) bool {
	c := containerStatus(p, "main")
	return c != nil && c.State.Waiting != nil && c.State.Waiting.Message != "" &&
		(c.State.Waiting.Reason == "ErrImagePull" || c.State.Waiting.Reason == "ImagePullBackOff")
}

// TestImagePullSecretsStandalone: on real containerd, from a real registry
// on loopback that wants basic auth, a pod whose imagePullSecrets (Secrets
// of the manifest directory) hold the registry's credentials pulls its
// image and runs, the wrong credentials of its first secret tried and
// passed over; the same pod without them waits in ErrImagePull or
// ImagePullBackOff with the registry's refusal as its message; a pod
// naming a Secret that does not exist gets the kubelet's
// FailedToRetrieveImagePullSecret event.
func TestImagePullSecretsStandalone(t *testing.T) {
	h := startPodHost(t)
	reg := startAuthRegistry(t, "puller", "pull-s3cret")
	reg.trustFrom(t, h.ctrd)
	image := reg.pushBusybox(t, "private/busybox", "1")
	h.writeManifest("pullsecrets.yaml", pullSecretManifest("regcred", reg.host, "puller", "pull-s3cret")+"---\n"+
		pullSecretManifest("wrongcred", reg.host, "puller", "not-the-password"))

	t.Run("without imagePullSecrets the pull is refused", func(t *testing.T) {
		h.apply(privatePod("anonymous", image))
		p := h.waitPod("anonymous", 90*time.Second, "ErrImagePull or ImagePullBackOff", pullFailed)
		msg := containerStatus(p, "main").State.Waiting.Message
		if !strings.Contains(msg, image) || !strings.Contains(strings.ToLower(msg), "unauthorized") {
			t.Errorf("message %q; want one naming the image and the registry's 401", msg)
		}
		if reg.denied.Load() == 0 {
			t.Error("the registry refused nothing")
		}
		h.delete("anonymous", nil)
	})

	t.Run("a missing Secret is FailedToRetrieveImagePullSecret", func(t *testing.T) {
		h.apply(privatePod("missing", image, "nosuch"))
		h.waitPod("missing", 90*time.Second, "ErrImagePull or ImagePullBackOff", pullFailed)
		poll(t, 30*time.Second, func() bool {
			return hasEvent(h.events("missing"), "FailedToRetrieveImagePullSecret", "Unable to retrieve some image pull secrets (nosuch)")
		}, func() string { return "events:\n" + eventsString(h.events("missing")) })
		h.delete("missing", nil)
	})

	t.Run("with imagePullSecrets the pod pulls and runs", func(t *testing.T) {
		h.apply(privatePod("private", image, "nosuch", "wrongcred", "regcred"))
		h.waitPhase("private", v1.PodRunning, 90*time.Second)
		h.waitLog("private", "main", "pulled-and-running\n")
		if !hasEvent(h.events("private"), "Pulled", "Successfully pulled image") {
			t.Errorf("events: %s; want Pulled", eventsString(h.events("private")))
		}
		for _, ev := range h.events("private") {
			if strings.Contains(ev.Message, "pull-s3cret") {
				t.Errorf("event shows the password: %s", ev.Message)
			}
		}
		if strings.Contains(h.logTail(), "pull-s3cret") {
			t.Error("the host's log shows the password")
		}
	})
}
