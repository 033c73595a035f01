package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// objectsManifest is a manifest of ConfigMap cfg (greeting, and later
// when not empty) and Secret creds (password, from stringData), and,
// when absent, ConfigMap absent.
func objectsManifest(greeting, later string, absent bool) string {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata:\n  greeting: " + greeting + "\n  mode: prod\n"
	if later != "" {
		doc += "  later: " + later + "\n"
	}
	doc += "---\napiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: s3cret-value}\n"
	if absent {
		doc += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: absent}\ndata: {x: here}\n"
	}
	return doc
}

// objectsReader is a pod that reads ConfigMap cfg and Secret creds as
// env (keys and envFrom with a prefix) and as configMap, secret and
// projected volume files, printing them every half second.
func objectsReader(name string) *v1.Pod {
	ref := func(n string) v1.LocalObjectReference { return v1.LocalObjectReference{Name: n} }
	c := sh("main", `echo "env GREETING=$GREETING PASSWORD=$PASSWORD CFG_mode=$CFG_mode"; `+
		`while true; do echo "files cfg=$(cat /etc/cfg/greeting) secret=$(cat /etc/creds/password) mode=$(stat -L -c %a /etc/creds/password) proj=$(cat /etc/proj/g)/$(cat /etc/proj/p)"; sleep 0.5; done`)
	c.Env = []v1.EnvVar{
		{Name: "GREETING", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: ref("cfg"), Key: "greeting"}}},
		{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: ref("creds"), Key: "password"}}},
	}
	c.EnvFrom = []v1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: ref("cfg")}}}
	c.VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}, {Name: "creds", MountPath: "/etc/creds"}, {Name: "proj", MountPath: "/etc/proj"}}
	p := busyPod(name, v1.RestartPolicyAlways, c)
	mode := int32(0o400)
	p.Spec.Volumes = []v1.Volume{
		volume("cfg", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: ref("cfg")}}),
		volume("creds", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", DefaultMode: &mode}}),
		volume("proj", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: ref("cfg"), Items: []v1.KeyToPath{{Key: "greeting", Path: "g"}}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: ref("creds"), Items: []v1.KeyToPath{{Key: "password", Path: "p"}}}},
		}}}),
	}
	zero := int64(0)
	p.Spec.TerminationGracePeriodSeconds = &zero
	return p
}

// TestConfigMapsAndSecretsStandalone: without an API server, a pod reads a
// ConfigMap and a Secret of the manifest directory as env and as volume
// files; a change of the ConfigMap reaches the files in the running
// container; a missing key is CreateContainerConfigError with the
// kubelet's message until the key is added, and a missing ConfigMap of a
// volume keeps its pod ContainerCreating with FailedMount until it is
// added; after a host restart the objects are still served. The Secret's
// value never shows in the host's log, events or the pods' YAML.
func TestConfigMapsAndSecretsStandalone(t *testing.T) {
	h := startPodHost(t)
	h.writeManifest("objects.yaml", objectsManifest("hello", "", false))

	h.apply(objectsReader("reader"))
	h.waitPhase("reader", v1.PodRunning, 90*time.Second)
	h.waitLog("reader", "main", "env GREETING=hello PASSWORD=s3cret-value CFG_mode=prod\n")
	h.waitLog("reader", "main", "files cfg=hello secret=s3cret-value mode=400 proj=hello/s3cret-value\n")

	t.Run("a changed ConfigMap reaches the volume files", func(t *testing.T) {
		h.writeManifest("objects.yaml", objectsManifest("bonjour", "", false))
		h.waitLog("reader", "main", "files cfg=bonjour secret=s3cret-value mode=400 proj=bonjour/s3cret-value\n")
	})

	t.Run("a missing key is CreateContainerConfigError until it is added", func(t *testing.T) {
		c := sh("main", `echo "later=$LATER"; sleep 3600`)
		c.Env = []v1.EnvVar{{Name: "LATER", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "later"}}}}
		p := busyPod("waiter", v1.RestartPolicyAlways, c)
		h.apply(p)
		got := h.waitPod("waiter", 60*time.Second, "CreateContainerConfigError", func(p *v1.Pod) bool {
			st := containerStatus(p, "main")
			return st != nil && st.State.Waiting != nil && st.State.Waiting.Reason == "CreateContainerConfigError"
		})
		if msg := containerStatus(got, "main").State.Waiting.Message; !strings.Contains(msg, "couldn't find key later in ConfigMap default/cfg") {
			t.Errorf("waiting message %q; want the kubelet's", msg)
		}
		h.writeManifest("objects.yaml", objectsManifest("bonjour", "now", false))
		h.waitPod("waiter", 120*time.Second, "running", running)
		h.waitLog("waiter", "main", "later=now\n")
	})

	t.Run("a missing ConfigMap volume keeps the pod ContainerCreating until it is added", func(t *testing.T) {
		c := sh("main", `echo "x=$(cat /etc/absent/x)"; sleep 3600`)
		c.VolumeMounts = []v1.VolumeMount{{Name: "absent", MountPath: "/etc/absent"}}
		p := busyPod("mounter", v1.RestartPolicyAlways, c)
		p.Spec.Volumes = []v1.Volume{volume("absent", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}})}
		h.apply(p)
		var evs string
		poll(t, 60*time.Second, func() bool {
			e := h.events("mounter")
			evs = eventsString(e)
			return hasEvent(e, "FailedMount", `configmaps "absent" not found`)
		}, func() string { return "events of mounter:\n" + evs })
		if got, _ := h.get("mounter"); got == nil || got.Status.Phase != v1.PodPending || running(got) {
			t.Errorf("pod with a missing ConfigMap volume: %s; want Pending", podStatusString(got))
		}
		h.writeManifest("objects.yaml", objectsManifest("bonjour", "now", true))
		h.waitPod("mounter", 120*time.Second, "running", running)
		h.waitLog("mounter", "main", "x=here\n")
	})

	t.Run("the objects survive a host restart", func(t *testing.T) {
		// One more through the local API, kept in the host's state.
		file := filepath.Join(t.TempDir(), "api-cfg.yaml")
		if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api-cfg}\ndata: {who: local-api}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := h.hostCLI(t.Context(), "configmaps", "apply", "-f", file); err != nil || !strings.Contains(out, "configmap default/api-cfg created (keys who)") {
			t.Fatalf("podhost configmaps apply: %v\n%s", err, out)
		}
		h.sigtermHost()
		h.start()
		c := sh("main", `echo "who=$WHO"; sleep 3600`)
		c.Env = []v1.EnvVar{{Name: "WHO", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "api-cfg"}, Key: "who"}}}}
		h.apply(busyPod("api-reader", v1.RestartPolicyAlways, c))
		h.waitLog("api-reader", "main", "who=local-api\n")
		if out, err := h.hostCLI(t.Context(), "configmaps", "delete", "default/api-cfg"); err != nil {
			t.Errorf("podhost configmaps delete: %v\n%s", err, out)
		}
		if out, err := h.hostCLI(t.Context(), "configmaps", "list"); err != nil || strings.Contains(out, "api-cfg") {
			t.Errorf("podhost configmaps list after the delete: %v\n%s", err, out)
		}
		h.apply(objectsReader("after"))
		h.waitPhase("after", v1.PodRunning, 90*time.Second)
		h.waitLog("after", "main", "env GREETING=bonjour PASSWORD=s3cret-value CFG_mode=prod\n")
		h.waitLog("after", "main", "files cfg=bonjour secret=s3cret-value mode=400 proj=bonjour/s3cret-value\n")
	})

	t.Run("the secret's value never shows outside the container", func(t *testing.T) {
		for _, name := range []string{"reader", "waiter", "mounter", "after"} {
			if out, err := h.hostCLI(t.Context(), "pods", "get", "default/"+name, "-o", "yaml"); err != nil || strings.Contains(out, "s3cret") {
				t.Errorf("podhost pods get %s -o yaml: %v; shows the secret: %v", name, err, strings.Contains(out, "s3cret"))
			}
			if evs := eventsString(h.events(name)); strings.Contains(evs, "s3cret") {
				t.Errorf("events of %s show the secret:\n%s", name, evs)
			}
		}
		out, err := h.hostCLI(t.Context(), "secrets", "list", "-o", "json")
		if err != nil || !strings.Contains(out, `"password"`) || strings.Contains(out, "s3cret") {
			t.Errorf("podhost secrets list -o json: %v; want the key password and no value:\n%s", err, out)
		}
		if out, err := h.hostCLI(t.Context(), "configmaps", "list"); err != nil || !strings.Contains(out, "default/cfg") || !strings.Contains(out, "greeting,later,mode") {
			t.Errorf("podhost configmaps list: %v; want default/cfg with its keys:\n%s", err, out)
		}
		for _, log := range h.logs {
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "s3cret") {
				t.Errorf("host log %s shows the secret", log)
			}
		}
	})
}
