package sources

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pod builds a valid pod "ns/name" from origin key; claim names a PVC volume.
func pod(nsName, key, claim string) Pod {
	ns, name, _ := strings.Cut(nsName, "/")
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{{Name: "app", Image: "busybox:1"}},
		},
	}
	if claim != "" {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	}
	return Pod{Pod: p, Origin: Origin{Key: key, Where: key}}
}

// projectedPod is pod with a projected volume.
func projectedPod(nsName, key string) Pod {
	p := pod(nsName, key, "")
	p.Pod.Spec.Volumes = []v1.Volume{{Name: "kube-api-access", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
	return p
}

func claim(nsName, key string) Claim {
	ns, name, _ := strings.Cut(nsName, "/")
	return Claim{Claim: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, Origin: Origin{Key: key, Where: key}}
}

func configMap(nsName, key string) ConfigMap {
	ns, name, _ := strings.Cut(nsName, "/")
	return ConfigMap{ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, Origin: Origin{Key: key, Where: key}}
}

func secret(nsName, key string) Secret {
	ns, name, _ := strings.Cut(nsName, "/")
	return Secret{Secret: &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, Origin: Origin{Key: key, Where: key}}
}

func volume(name, key string) Volume {
	return Volume{Volume: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}, Origin: Origin{Key: key, Where: key}}
}

// summary renders a desired set as lines: "run ns/name file:a.yaml",
// "reject ns/name api:r1: <kind of error>", "error <message>", "synced".
func summary(d Desired) []string {
	var out []string
	for _, p := range d.Pods {
		out = append(out, fmt.Sprintf("run %s %s:%s", podKey(p), p.Origin.Source, p.Origin.Key))
	}
	for _, r := range d.Rejected {
		why := "invalid"
		if errors.Is(r.Err, ErrConflict) {
			why = "conflict"
		}
		out = append(out, fmt.Sprintf("reject %s %s:%s: %s", podKey(r.Pod), r.Pod.Origin.Source, r.Pod.Origin.Key, why))
	}
	for _, v := range d.Volumes {
		out = append(out, "pv "+v.Volume.Name+" "+v.Origin.Source+":"+v.Origin.Key)
	}
	for _, c := range d.Claims {
		out = append(out, "pvc "+c.Claim.Namespace+"/"+c.Claim.Name+" "+c.Origin.Source+":"+c.Origin.Key)
	}
	for _, c := range d.ConfigMaps {
		out = append(out, "configmap "+c.ConfigMap.Namespace+"/"+c.ConfigMap.Name+" "+c.Origin.Source+":"+c.Origin.Key)
	}
	for _, c := range d.Secrets {
		out = append(out, "secret "+c.Secret.Namespace+"/"+c.Secret.Name+" "+c.Origin.Source+":"+c.Origin.Key)
	}
	for _, e := range d.Errors {
		out = append(out, "error "+e.Error())
	}
	if d.Synced {
		out = append(out, "synced")
	}
	return out
}

func TestMerger(t *testing.T) {
	type step struct {
		snap Snapshot
		want []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"one source syncs only when all expected have reported", []step{
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", "")}}, []string{"run default/web file:a.yaml"}},
			{Snapshot{Source: SourceAPI}, []string{"run default/web file:a.yaml", "synced"}},
		}},
		{"claims made before the sources synced go by source order, at every start", []step{
			{Snapshot{Source: SourceAPI, Pods: []Pod{pod("default/web", "r1", "")}}, []string{"run default/web api:r1"}},
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", "")}}, []string{
				"run default/web file:a.yaml", "reject default/web api:r1: conflict", "synced"}},
		}},
		{"second source claiming a name is rejected, first keeps running", []step{
			{Snapshot{Source: SourceFile}, []string{}},
			{Snapshot{Source: SourceAPI, Pods: []Pod{pod("default/web", "r1", "")}}, []string{"run default/web api:r1", "synced"}},
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", "")}}, []string{
				"run default/web api:r1", "reject default/web file:a.yaml: conflict", "synced"}},
			// The first claimant edits its pod: it still holds the name.
			{Snapshot{Source: SourceAPI, Pods: []Pod{pod("default/web", "r1", "")}}, []string{
				"run default/web api:r1", "reject default/web file:a.yaml: conflict", "synced"}},
		}},
		{"winner drops the name, the waiting claimant takes over", []step{
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", "")}}, []string{"run default/web file:a.yaml"}},
			{Snapshot{Source: SourceAPI, Pods: []Pod{pod("default/web", "r1", "")}}, []string{
				"run default/web file:a.yaml", "reject default/web api:r1: conflict", "synced"}},
			{Snapshot{Source: SourceFile}, []string{"run default/web api:r1", "synced"}},
			// The file comes back: it is now the later claimant.
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", "")}}, []string{
				"run default/web api:r1", "reject default/web file:a.yaml: conflict", "synced"}},
		}},
		{"two files of one source claim a name: the first to appear wins", []step{
			{Snapshot{Source: SourceAPI}, []string{}},
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "b.yaml", "")}}, []string{"run default/web file:b.yaml", "synced"}},
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", ""), pod("default/web", "b.yaml", "")}}, []string{
				"run default/web file:b.yaml", "reject default/web file:a.yaml: conflict", "synced"}},
		}},
		{"two documents of one file with one name: the first document wins", []step{
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", ""), pod("default/web", "a.yaml", "")}}, []string{
				"run default/web file:a.yaml", "reject default/web file:a.yaml: conflict"}},
		}},
		{"same name in two namespaces is no conflict", []step{
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", ""), pod("prod/web", "b.yaml", "")}}, []string{
				"run default/web file:a.yaml", "run prod/web file:b.yaml"}},
		}},
		{"claim references resolve across sources", []step{
			{Snapshot{Source: SourceAPI, Pods: []Pod{pod("default/db", "r1", "data")}}, []string{"reject default/db api:r1: invalid"}},
			{Snapshot{Source: SourceFile, Claims: []Claim{claim("default/data", "pv.yaml")}, Volumes: []Volume{volume("pv1", "pv.yaml")}}, []string{
				"run default/db api:r1", "pv pv1 file:pv.yaml", "pvc default/data file:pv.yaml", "synced"}},
		}},
		{"a pod of the API server is not rejected for a claim the sources lack: its claims are the API server's", []step{
			{Snapshot{Source: SourceAPIServer, Pods: []Pod{pod("default/db", "p1", "data")}}, []string{"run default/db apiserver:p1"}},
			// A static pod's claim still resolves against the sources.
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/st", "st.yaml", "data")}}, []string{
				"run default/db apiserver:p1", "reject default/st file:st.yaml: invalid"}},
		}},
		{"projected volumes: a pod of the API server may have one, a static pod may not", []step{
			{Snapshot{Source: SourceAPIServer, Pods: []Pod{projectedPod("default/web", "p1")}}, []string{"run default/web apiserver:p1"}},
			{Snapshot{Source: SourceFile, Pods: []Pod{projectedPod("default/st", "st.yaml")}}, []string{
				"run default/web apiserver:p1", "reject default/st file:st.yaml: invalid"}},
		}},
		{"a conflicting claim is an error and the first claim stays", []step{
			{Snapshot{Source: SourceFile, Claims: []Claim{claim("default/data", "a.yaml")}}, []string{"pvc default/data file:a.yaml"}},
			{Snapshot{Source: SourceAPI, Claims: []Claim{claim("default/data", "r1")}}, []string{
				"pvc default/data file:a.yaml",
				`error r1: PersistentVolumeClaim default/data: name claimed by another source: held by source "file" (a.yaml)`,
				"synced"}},
		}},
		{"ConfigMaps and Secrets: the first claimant keeps a name, a later one is an error, the same name in two kinds is none", []step{
			{Snapshot{Source: SourceFile, ConfigMaps: []ConfigMap{configMap("default/cfg", "a.yaml")}, Secrets: []Secret{secret("default/cfg", "a.yaml")}}, []string{
				"configmap default/cfg file:a.yaml", "secret default/cfg file:a.yaml"}},
			{Snapshot{Source: SourceAPI, ConfigMaps: []ConfigMap{configMap("default/cfg", "r1"), configMap("prod/cfg", "r1")}, Secrets: []Secret{secret("default/cfg", "r1")}}, []string{
				"configmap default/cfg file:a.yaml", "configmap prod/cfg api:r1", "secret default/cfg file:a.yaml",
				`error r1: ConfigMap default/cfg: name claimed by another source: held by source "file" (a.yaml)`,
				`error r1: Secret default/cfg: name claimed by another source: held by source "file" (a.yaml)`,
				"synced"}},
			// The winner drops its objects: the other claimant takes over.
			{Snapshot{Source: SourceFile}, []string{"configmap default/cfg api:r1", "configmap prod/cfg api:r1", "secret default/cfg api:r1", "synced"}},
		}},
		{"source errors pass through and do not affect other pods", []step{
			{Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", "")}, Errors: []error{errors.New("b.yaml: document 1: kind: Unsupported value")}}, []string{
				"run default/web file:a.yaml", "error b.yaml: document 1: kind: Unsupported value"}},
		}},
		{"an invalid pod is rejected, not run", []step{
			{Snapshot{Source: SourceAPI, Pods: []Pod{pod("default/Bad_Name", "r1", ""), pod("default/ok", "r2", "")}}, []string{
				"run default/ok api:r2", "reject default/Bad_Name api:r1: invalid"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMerger(SourceFile, SourceAPI)
			for i, st := range tt.steps {
				got := summary(m.Update(st.snap))
				if strings.Join(got, "\n") != strings.Join(st.want, "\n") {
					t.Fatalf("step %d:\n got %q\nwant %q", i, got, st.want)
				}
			}
		})
	}
}

func TestConflictErrorMessage(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&ConflictError{Kind: "Pod", Name: "default/web",
			Loser:  Origin{Source: SourceFile, Where: "pods/web.yaml: document 1"},
			Winner: Origin{Source: SourceAPI, Where: "request web"}},
			`pods/web.yaml: document 1: Pod default/web: name claimed by another source: held by source "api" (request web)`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, ErrConflict) {
			t.Errorf("errors.Is(%v, ErrConflict) = false", tt.err)
		}
	}
}

// objectErr is a source's error about one object, as a manifest document's.
type objectErr struct{ kind, ns, name, msg string }

func (e objectErr) Error() string                          { return e.msg }
func (e objectErr) Object() (kind, namespace, name string) { return e.kind, e.ns, e.name }

// TestRejectedPodNamesItsClaimsProblem: a pod whose claim was rejected
// beside it (no spec.volumeName) is rejected with the claim's own error,
// not only "Not found"; a pod of the API server is not (its claims are the
// API server's).
func TestRejectedPodNamesItsClaimsProblem(t *testing.T) {
	m := NewMerger(SourceFile)
	bad := objectErr{"PersistentVolumeClaim", "default", "data", "a.yaml: document 1: PersistentVolumeClaim default/data: spec.volumeName: Required value"}
	d := m.Update(Snapshot{Source: SourceFile, Pods: []Pod{pod("default/web", "a.yaml", "data"), pod("default/other", "a.yaml", "elsewhere")},
		Errors: []error{objectErr{"Pod", "default", "data", "a pod of that name"}, bad}})
	if len(d.Rejected) != 2 {
		t.Fatalf("rejected %v; want both pods", d.Rejected)
	}
	for _, r := range d.Rejected {
		msg := r.Err.Error()
		hasClaim := strings.Contains(msg, "claim default/data was rejected: "+bad.msg)
		if want := r.Pod.Pod.Name == "web"; hasClaim != want || !strings.Contains(msg, "claimName: Not found") {
			t.Errorf("pod %s rejected with %q; want the Not found, and the claim's error: %v", r.Pod.Pod.Name, msg, want)
		}
	}
}

// TestStaticPodLocalStorageLimitsRefused: a pod of the manifest directory
// with an ephemeral-storage limit is rejected naming the field (a static
// pod is never evicted, so the limit could not be enforced); the same pod
// applied through the local API runs.
func TestStaticPodLocalStorageLimitsRefused(t *testing.T) {
	limited := func(key string) Pod {
		p := pod("default/web", key, "")
		p.Pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Mi")}
		return p
	}
	m := NewMerger(SourceFile, SourceAPI)
	d := m.Update(Snapshot{Source: SourceFile, Pods: []Pod{limited("a.yaml")}})
	if len(d.Rejected) != 1 || !strings.Contains(d.Rejected[0].Err.Error(), "spec.containers[0].resources.limits[ephemeral-storage]: Forbidden: not enforced on a static pod") {
		t.Fatalf("static pod: rejected %v; want it refused naming its limit", d.Rejected)
	}
	m = NewMerger(SourceAPI)
	d = m.Update(Snapshot{Source: SourceAPI, Pods: []Pod{limited("r1")}})
	if len(d.Rejected) != 0 || len(d.Pods) != 1 {
		t.Fatalf("local API pod: rejected %v, runs %d; want it run", d.Rejected, len(d.Pods))
	}
}
