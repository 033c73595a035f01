package podvalidate

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// staticMark marks a test pod as static: ValidateStaticPod checks it too.
const staticMark = "test/static"

var update = flag.Bool("update", false, "rewrite docs/pod-fields.md from Rules")

const fieldsDoc = "../../docs/pod-fields.md"

// classifiedFields walks the types of Roots as refusedFields walks a pod:
// every field of a struct reached, descending through honoured fields
// that are not opaque. It returns the rule keys in walk order and the
// keys of fields without a rule.
func classifiedFields() (keys, missing []string) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		rt := ruleType(t)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if inline(f) {
				walk(f.Type)
				continue
			}
			key := rt.Name() + "." + jsonName(f)
			r, ok := Rules[key]
			if !ok {
				missing = append(missing, key+" ("+t.Name()+")")
				continue
			}
			keys = append(keys, key)
			if r.Class == Honoured && !r.Opaque && classified(elem(f.Type)) {
				walk(elem(f.Type))
			}
		}
	}
	for _, t := range Roots {
		walk(t)
	}
	return keys, missing
}

// TestFieldTableIsComplete is the rule of issue 22: every field of the pod
// podhost receives is honoured or refused. A field a k8s.io/api upgrade
// adds fails here until it is classified; a rule for a field that no
// longer exists fails too; docs/pod-fields.md must be the table.
func TestFieldTableIsComplete(t *testing.T) {
	keys, missing := classifiedFields()
	for _, k := range missing {
		t.Errorf("field %s is neither honoured nor refused: add it to Rules", k)
	}
	used := map[string]bool{}
	for _, k := range keys {
		used[k] = true
	}
	for k := range Rules {
		if !used[k] {
			t.Errorf("rule %s classifies no field reached from the roots", k)
		}
	}
	for k, r := range Rules {
		if r.Class != Honoured && r.Class != Refused {
			t.Errorf("rule %s has no class", k)
		}
		if r.Class == Refused && r.Note == "" {
			t.Errorf("refused field %s says not why", k)
		}
	}
	doc := fieldTable(keys)
	if *update {
		if err := os.WriteFile(fieldsDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(fieldsDoc)
	if err != nil {
		t.Fatalf("%v (go test ./sources/podvalidate -run TestFieldTableIsComplete -update writes it)", err)
	}
	if string(got) != doc {
		t.Errorf("%s is not the table of Rules: go test ./sources/podvalidate -run TestFieldTableIsComplete -update", fieldsDoc)
	}
}

// fieldTable renders the rules as docs/pod-fields.md, one table per type
// in the order the walk first reaches it.
func fieldTable(keys []string) string {
	var b strings.Builder
	b.WriteString(`# Pod fields: honoured or refused

Generated from sources/podvalidate's Rules by
` + "`go test ./sources/podvalidate -run TestFieldTableIsComplete -update`" + `; the test fails
when a field of k8s.io/api's pod types is in neither class, or when this file is not the table.

Every field of a pod podhost receives is **honoured**, as the kubelet honours it, or **refused**:
a pod that sets it (to anything but the values listed as accepted) is rejected at admission
with an error naming the field (standalone: the manifest file or API request is rejected;
Kubernetes mode: the pod fails with reason InvalidPod, or the kubelet's reason where it has one).
An honoured field may still have values refused by a check; its note says which.
A field marked *as a whole* is taken as one value (checked where it is used, or the scheduler's);
the fields of its type are not listed.
Container fields apply to app, init and ephemeral containers (ephemeral containers are refused).
`)
	var types []string
	byType := map[string][]string{}
	for _, k := range keys {
		typ, _, _ := strings.Cut(k, ".")
		if _, ok := byType[typ]; !ok {
			types = append(types, typ)
		}
		byType[typ] = append(byType[typ], k)
	}
	for _, typ := range types {
		fmt.Fprintf(&b, "\n## %s\n\n| field | class | note |\n|---|---|---|\n", typ)
		for _, k := range byType[typ] {
			_, name, _ := strings.Cut(k, ".")
			r := Rules[k]
			class := r.Class.String()
			if r.Opaque {
				class += ", as a whole"
			}
			note := r.Note
			if r.AllowNote != "" {
				note += " (accepted: " + r.AllowNote + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", name, class, strings.ReplaceAll(note, "|", `\|`))
		}
	}
	return b.String()
}

// TestRefusedFieldsAreNamed sets each refused field of the table that a
// pod can set and checks that ValidatePod names it.
func TestRefusedFieldsAreNamed(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *v1.Pod)
		want   string
	}{
		{"hostUsers false", func(p *v1.Pod) { p.Spec.HostUsers = ptr.To(false) }, "spec.hostUsers"},
		{"stopSignal", func(p *v1.Pod) { p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{StopSignal: ptr.To(v1.SIGUSR1)} }, "spec.containers[0].lifecycle.stopSignal"},
		{"downwardAPI item user", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}, User: ptr.To[int64](1000)}}}}
		}, "spec.volumes[1].downwardAPI.items[0].user"},
		{"resource claims", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}} }, "spec.containers[0].resources.claims"},
		{"emptyDir mode", func(p *v1.Pod) { p.Spec.Volumes[1].EmptyDir.Mode = ptr.To[int32](0o700) }, "spec.volumes[1].emptyDir.mode"},
		{"pod-level hugepages", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi")}}
		}, "spec.resources"},
		{"hostPort without hostNetwork", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].HostPort = 8080 }, "spec.containers[0].ports[0].hostPort"},
		{"emptyDir sizeLimit on disk of a static pod", func(p *v1.Pod) {
			p.Annotations = map[string]string{staticMark: "file"}
			p.Spec.Volumes[1].EmptyDir.SizeLimit = ptr.To(resource.MustParse("1Gi"))
		}, "spec.volumes[1].emptyDir.sizeLimit"},
		{"ephemeral-storage limit of a static pod", func(p *v1.Pod) {
			p.Annotations = map[string]string{staticMark: "file"}
			p.Spec.Containers[0].Resources.Limits[v1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, "spec.containers[0].resources.limits[ephemeral-storage]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := validPod()
			tt.mutate(pod)
			errs := ValidatePod(pod, knownClaims)
			if pod.Annotations[staticMark] != "" {
				if len(errs) > 0 {
					t.Errorf("ValidatePod of the static pod: %v; want its limits refused by ValidateStaticPod only", errs)
				}
				errs = ValidateStaticPod(pod)
			}
			if !hasForbidden(errs, tt.want) {
				t.Errorf("ValidatePod: got %v, want Forbidden %s", errs, tt.want)
			}
		})
	}
}

// TestSELinuxOptions: seLinuxOptions is refused on a node with SELinux,
// whose labels podhost would not apply, and accepted on a node without it,
// where the kubelet's runtime applies none either.
func TestSELinuxOptions(t *testing.T) {
	defer func(f func() bool) { selinuxEnabled = f }(selinuxEnabled)
	for _, enabled := range []bool{true, false} {
		selinuxEnabled = func() bool { return enabled }
		pod := validPod()
		pod.Spec.SecurityContext = &v1.PodSecurityContext{SELinuxOptions: &v1.SELinuxOptions{Level: "s0"}}
		pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{SELinuxOptions: &v1.SELinuxOptions{Type: "t"}}
		errs := ValidatePod(pod, knownClaims)
		for _, path := range []string{"spec.securityContext.seLinuxOptions", "spec.containers[0].securityContext.seLinuxOptions"} {
			if got := hasForbidden(errs, path); got != enabled {
				t.Errorf("SELinux enabled %v: %s refused %v, want %v (%v)", enabled, path, got, enabled, errs)
			}
		}
	}
}

// TestAcceptedDefaults: the values the API server defaults refused
// fields to are accepted, or no API-server pod would run.
func TestAcceptedDefaults(t *testing.T) {
	pod := validPod()
	c := &pod.Spec.Containers[0]
	c.TerminationMessagePath, c.TerminationMessagePolicy = v1.TerminationMessagePathDefault, v1.TerminationMessageReadFile
	c.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired}}
	pod.Spec.EnableServiceLinks, pod.Spec.HostUsers = ptr.To(true), ptr.To(true)
	pod.Spec.SetHostnameAsFQDN = ptr.To(false)
	if errs := ValidatePod(pod, knownClaims); len(errs) > 0 {
		t.Errorf("ValidatePod: %v", errs)
	}
}

func hasForbidden(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path && e.Type == field.ErrorTypeForbidden {
			return true
		}
	}
	return false
}

// TestAPIServerDefaultedPodIsAccepted: a pod as the API server stores it,
// with every default its admission and defaulting set, is not refused: a
// refused field's accepted values cover the defaults.
func TestAPIServerDefaultedPodIsAccepted(t *testing.T) {
	grace, expiry := int64(30), int64(3607)
	pod := validPod()
	pod.Spec.Volumes = append(pod.Spec.Volumes[1:], v1.Volume{Name: "kube-api-access-x1", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}})
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "kube-api-access-x1", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
	s := &pod.Spec
	s.EnableServiceLinks, s.SchedulerName, s.Priority = ptr.To(true), v1.DefaultSchedulerName, ptr.To[int32](0)
	s.PreemptionPolicy = ptr.To(v1.PreemptLowerPriority)
	s.ServiceAccountName, s.DeprecatedServiceAccount, s.NodeName = "default", "default", "node1"
	s.SecurityContext, s.TerminationGracePeriodSeconds = &v1.PodSecurityContext{}, &grace
	s.Tolerations = []v1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}}
	for _, cs := range [][]v1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			cs[i].TerminationMessagePath, cs[i].TerminationMessagePolicy = v1.TerminationMessagePathDefault, v1.TerminationMessageReadFile
			cs[i].ImagePullPolicy = v1.PullIfNotPresent
		}
	}
	if errs := ValidateAPIServerPod(pod); len(errs) > 0 {
		t.Errorf("ValidateAPIServerPod: %v", errs)
	}
}

// TestEphemeralContainers: an API-server pod may have the ephemeral
// container kubectl debug adds (aimed at one of its containers); its
// target must be a container of the pod; a pod of another source may
// have none.
func TestEphemeralContainers(t *testing.T) {
	debug := v1.EphemeralContainer{TargetContainerName: "app", EphemeralContainerCommon: v1.EphemeralContainerCommon{
		Name: "debugger-x7k", Image: "busybox", Stdin: true, TTY: true, ImagePullPolicy: v1.PullIfNotPresent,
		TerminationMessagePath: v1.TerminationMessagePathDefault, TerminationMessagePolicy: v1.TerminationMessageReadFile,
	}}
	pod := validPod()
	pod.Spec.Volumes = pod.Spec.Volumes[1:] // the API server's claims are not resolved here
	pod.Spec.Containers[0].VolumeMounts = nil
	pod.Spec.EphemeralContainers = []v1.EphemeralContainer{debug}
	if errs := ValidateAPIServerPod(pod); len(errs) > 0 {
		t.Errorf("API-server pod with kubectl debug's container: %v", errs)
	}
	pod.Spec.EphemeralContainers[0].TargetContainerName = "nope"
	if errs := ValidateAPIServerPod(pod); len(errs) != 1 || errs[0].Field != "spec.ephemeralContainers[0].targetContainerName" || errs[0].Type != field.ErrorTypeNotFound {
		t.Errorf("target not in the pod: %v; want spec.ephemeralContainers[0].targetContainerName: Not found", errs)
	}
	pod.Spec.EphemeralContainers[0].TargetContainerName = ""
	pod.Spec.EphemeralContainers[0].Name = "app"
	if errs := ValidateAPIServerPod(pod); len(errs) != 1 || errs[0].Field != "spec.ephemeralContainers[0].name" {
		t.Errorf("name of an app container: %v; want spec.ephemeralContainers[0].name: Duplicate value", errs)
	}
}

// TestEnvFromAPIObjects: env from ConfigMaps and Secrets is accepted in an
// API-server pod and in a pod of another source (whose objects are the
// sources').
func TestEnvFromAPIObjects(t *testing.T) {
	pod := validPod()
	pod.Spec.Volumes = pod.Spec.Volumes[1:]
	pod.Spec.Containers[0].VolumeMounts = nil
	ref := v1.LocalObjectReference{Name: "cfg"}
	pod.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{Prefix: "P_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: ref, Optional: ptr.To(true)}}}
	pod.Spec.Containers[0].Env = []v1.EnvVar{
		{Name: "A", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: ref, Key: "a"}}},
		{Name: "B", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: ref, Key: "b", Optional: ptr.To(false)}}},
	}
	if errs := ValidateAPIServerPod(pod); len(errs) > 0 {
		t.Errorf("API-server pod: %v", errs)
	}
	if errs := ValidatePod(pod, nil); len(errs) > 0 {
		t.Errorf("standalone pod: %v", errs)
	}
}
