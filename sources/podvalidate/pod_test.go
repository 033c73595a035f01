package podvalidate

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// validPod is a pod that breaks no rule; each case below breaks one.
func validPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node1", Namespace: "default"},
		Spec: v1.PodSpec{
			RestartPolicy:                 v1.RestartPolicyAlways,
			DNSPolicy:                     v1.DNSClusterFirst,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			InitContainers:                []v1.Container{{Name: "init", Image: "busybox:1"}},
			Containers: []v1.Container{{
				Name:         "app",
				Image:        "nginx:1.27",
				Ports:        []v1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: v1.ProtocolTCP}},
				Env:          []v1.EnvVar{{Name: "MODE", Value: "prod"}},
				VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}},
				Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
					Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
				},
			}},
			Volumes: []v1.Volume{
				{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			},
		},
	}
}

func knownClaims(ns, name string) bool { return ns == "default" && name == "data" }

// validateCase mutates validPod and names the errors ValidatePod must
// return, as "path: type", in order.
type validateCase struct {
	name   string
	mutate func(p *v1.Pod)
	want   []string
}

func runValidateCases(t *testing.T, tests []validateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := validPod()
			tt.mutate(pod)
			got := summarize(ValidatePod(pod, knownClaims))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("ValidatePod errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidatePod(t *testing.T) {
	tests := []validateCase{
		{"valid", func(*v1.Pod) {}, nil},
		{"name required", func(p *v1.Pod) { p.Name = "" }, []string{"metadata.name: Required value"}},
		{"name not a subdomain", func(p *v1.Pod) { p.Name = "Web_1" }, []string{"metadata.name: Invalid value"}},
		{"namespace required", func(p *v1.Pod) { p.Namespace = "" }, []string{"metadata.namespace: Required value", "spec.volumes[0].persistentVolumeClaim.claimName: Not found"}},
		{"namespace not a label", func(p *v1.Pod) { p.Namespace = "a.b" }, []string{"metadata.namespace: Invalid value", "spec.volumes[0].persistentVolumeClaim.claimName: Not found"}},
		{"containers required", func(p *v1.Pod) { p.Spec.Containers = nil }, []string{"spec.containers: Required value"}},
		{"container name required", func(p *v1.Pod) { p.Spec.Containers[0].Name = "" }, []string{"spec.containers[0].name: Required value"}},
		{"container name not a label", func(p *v1.Pod) { p.Spec.Containers[0].Name = "App" }, []string{"spec.containers[0].name: Invalid value"}},
		{"container name duplicate", func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "app", Image: "x"})
		}, []string{"spec.containers[1].name: Duplicate value"}},
		{"container name duplicates init container", func(p *v1.Pod) { p.Spec.Containers[0].Name = "init" }, []string{"spec.containers[0].name: Duplicate value"}},
		{"RestartAllContainers on init, sidecar and app containers", func(p *v1.Pod) {
			rules := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
			never, always := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyAlways
			side := p.Spec.InitContainers[0]
			side.Name, side.RestartPolicy, side.RestartPolicyRules = "side", &always, rules
			p.Spec.InitContainers[0].RestartPolicy, p.Spec.InitContainers[0].RestartPolicyRules = &never, rules
			p.Spec.InitContainers = append(p.Spec.InitContainers, side)
			p.Spec.Containers[0].RestartPolicy, p.Spec.Containers[0].RestartPolicyRules = &never, rules
		}, nil},
		{"restart rules on an init container without restartPolicy", func(p *v1.Pod) {
			p.Spec.InitContainers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}
		}, []string{"spec.initContainers[0].restartPolicy: Required value"}},
		{"image required", func(p *v1.Pod) { p.Spec.Containers[0].Image = " " }, []string{"spec.containers[0].image: Required value"}},
		{"init image required", func(p *v1.Pod) { p.Spec.InitContainers[0].Image = "" }, []string{"spec.initContainers[0].image: Required value"}},
		{"termination message policy", func(p *v1.Pod) { p.Spec.Containers[0].TerminationMessagePolicy = "Always" }, []string{"spec.containers[0].terminationMessagePolicy: Unsupported value"}},
		{"termination message fallback", func(p *v1.Pod) {
			p.Spec.Containers[0].TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
			p.Spec.Containers[0].TerminationMessagePath = "/tmp/message"
		}, nil},
		{"termination message path relative", func(p *v1.Pod) { p.Spec.InitContainers[0].TerminationMessagePath = "dev/log" }, []string{"spec.initContainers[0].terminationMessagePath: Invalid value"}},
		{"image pull policy", func(p *v1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" }, []string{"spec.containers[0].imagePullPolicy: Unsupported value"}},
		{"restart policy required", func(p *v1.Pod) { p.Spec.RestartPolicy = "" }, []string{"spec.restartPolicy: Required value"}},
		{"restart policy unsupported", func(p *v1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, []string{"spec.restartPolicy: Unsupported value"}},
		{"dns policy unsupported", func(p *v1.Pod) { p.Spec.DNSPolicy = "Mine" }, []string{"spec.dnsPolicy: Unsupported value"}},
		{"grace period negative", func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-1) }, []string{"spec.terminationGracePeriodSeconds: Invalid value"}},
		{"host aliases and subdomain", func(p *v1.Pod) {
			p.Spec.Subdomain = "web"
			p.Spec.HostAliases = []v1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"a.example", "b"}}, {IP: "fd00::1", Hostnames: []string{"c"}}}
		}, nil},
		{"host alias bad ip", func(p *v1.Pod) { p.Spec.HostAliases = []v1.HostAlias{{IP: "10.1.2", Hostnames: []string{"a"}}} }, []string{"spec.hostAliases[0].ip: Invalid value"}},
		{"host alias without names", func(p *v1.Pod) { p.Spec.HostAliases = []v1.HostAlias{{IP: "10.1.2.3"}} }, []string{"spec.hostAliases[0].hostnames: Required value"}},
		{"host alias name smuggling a line", func(p *v1.Pod) {
			p.Spec.HostAliases = []v1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"a\n6.6.6.6 bank.example"}}}
		}, []string{"spec.hostAliases[0].hostnames[0]: Invalid value"}},
		{"subdomain not a label", func(p *v1.Pod) { p.Spec.Subdomain = "a.b" }, []string{"spec.subdomain: Invalid value"}},
		{"grace period zero", func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) }, nil},
		{"active deadline", func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) }, nil},
		{"active deadline zero", func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) }, []string{"spec.activeDeadlineSeconds: Invalid value"}},
		{"ephemeral containers", func(p *v1.Pod) {
			p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg", Image: "x"}}}
		}, []string{"spec.ephemeralContainers: Forbidden"}},
		{"volume name required", func(p *v1.Pod) { p.Spec.Volumes[1].Name = "" }, []string{"spec.volumes[1].name: Required value"}},
		{"volume name not a label", func(p *v1.Pod) { p.Spec.Volumes[1].Name = "Scratch" }, []string{"spec.volumes[1].name: Invalid value"}},
		{"volume name duplicate", func(p *v1.Pod) { p.Spec.Volumes[1].Name = "data" }, []string{"spec.volumes[1].name: Duplicate value"}},
		{"volume source required", func(p *v1.Pod) { p.Spec.Volumes[1].EmptyDir = nil }, []string{"spec.volumes[1]: Required value"}},
		{"volume source twice", func(p *v1.Pod) { p.Spec.Volumes[1].HostPath = &v1.HostPathVolumeSource{Path: "/x"} }, []string{"spec.volumes[1].emptyDir: Forbidden"}},
		{"volume source unsupported", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{GitRepo: &v1.GitRepoVolumeSource{}}
		}, []string{"spec.volumes[1].gitRepo: Forbidden"}},
		{"configMap and secret volumes: the sources' objects", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}}
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}})
		}, nil},
		{"downwardAPI volume", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{DefaultMode: ptr.To[int32](0o400), Items: []v1.DownwardAPIVolumeFile{
				{Path: "podname", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}},
				{Path: "info/labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: ptr.To[int32](0o644)},
				{Path: "tier", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['tier']"}},
				{Path: "cpu_limit", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}},
			}}}
		}, nil},
		{"projected downwardAPI volume", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
				{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "podname", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
			}}}
		}, nil},
		{"projected configMap and secret without the API server", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
				{DownwardAPI: &v1.DownwardAPIProjection{}},
				{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}},
				{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "s"}}},
			}}}
		}, nil},
		{"projected token without the API server", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
				{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}},
				{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
			}}}
		}, []string{"spec.volumes[1].projected.sources[1]: Forbidden"}},
		{"downwardAPI paths and items", func(p *v1.Pod) {
			field := &v1.ObjectFieldSelector{FieldPath: "metadata.name"}
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{DefaultMode: ptr.To[int32](0o1000), Items: []v1.DownwardAPIVolumeFile{
				{Path: "", FieldRef: field},
				{Path: "/etc/passwd", FieldRef: field},
				{Path: "a/../../escape", FieldRef: field},
				{Path: "..data", FieldRef: field},
				{Path: "ok", FieldRef: field, Mode: ptr.To[int32](-1)},
				{Path: "node", FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}},
				{Path: "badkey", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['a b']"}},
				{Path: "none"},
				{Path: "both", FieldRef: field, ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}},
				{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("2")}},
			}}}
		}, []string{
			"spec.volumes[1].downwardAPI.defaultMode: Invalid value",
			"spec.volumes[1].downwardAPI.items[0].path: Required value",
			"spec.volumes[1].downwardAPI.items[1].path: Invalid value",
			"spec.volumes[1].downwardAPI.items[2].path: Invalid value",
			"spec.volumes[1].downwardAPI.items[3].path: Invalid value",
			"spec.volumes[1].downwardAPI.items[4].mode: Invalid value",
			"spec.volumes[1].downwardAPI.items[5].fieldRef.fieldPath: Unsupported value",
			"spec.volumes[1].downwardAPI.items[6].fieldRef.fieldPath: Unsupported value",
			"spec.volumes[1].downwardAPI.items[7]: Required value",
			"spec.volumes[1].downwardAPI.items[8]: Invalid value",
			"spec.volumes[1].downwardAPI.items[9].resourceFieldRef.containerName: Required value",
			"spec.volumes[1].downwardAPI.items[9].resourceFieldRef.divisor: Unsupported value",
		}},
		{"hostPath path required", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{}}
		}, []string{"spec.volumes[1].hostPath.path: Required value"}},
		{"csi driver required", func(p *v1.Pod) {
			p.Spec.Volumes[1].VolumeSource = v1.VolumeSource{CSI: &v1.CSIVolumeSource{}}
		}, []string{"spec.volumes[1].csi.driver: Required value"}},
		{"emptyDir size negative", func(p *v1.Pod) {
			p.Spec.Volumes[1].EmptyDir.SizeLimit = ptr.To(resource.MustParse("-1Gi"))
		}, []string{"spec.volumes[1].emptyDir.sizeLimit: Invalid value"}},
		{"claim name required", func(p *v1.Pod) { p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "" }, []string{"spec.volumes[0].persistentVolumeClaim.claimName: Required value"}},
		{"claim unknown", func(p *v1.Pod) { p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "other" }, []string{"spec.volumes[0].persistentVolumeClaim.claimName: Not found"}},
		{"claim in another namespace", func(p *v1.Pod) { p.Namespace = "prod" }, []string{"spec.volumes[0].persistentVolumeClaim.claimName: Not found"}},
		{"mount of undeclared volume", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].Name = "nope" }, []string{"spec.containers[0].volumeMounts[0].name: Not found"}},
		{"mount path required", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].MountPath = "" }, []string{"spec.containers[0].volumeMounts[0].mountPath: Required value"}},
		{"hostnameOverride", func(p *v1.Pod) {
			p.Spec.HostnameOverride = ptr.To("override.example.host")
			p.Spec.Hostname, p.Spec.Subdomain = "h", "s"
		}, nil},
		{"hostnameOverride not a DNS subdomain", func(p *v1.Pod) { p.Spec.HostnameOverride = ptr.To("Not-RFC1123") }, []string{"spec.hostnameOverride: Invalid value"}},
		{"hostnameOverride too long", func(p *v1.Pod) { p.Spec.HostnameOverride = ptr.To(strings.Repeat("a", 60) + ".bcde") }, []string{"spec.hostnameOverride: Too long"}},
		{"hostnameOverride with setHostnameAsFQDN", func(p *v1.Pod) {
			p.Spec.HostnameOverride = ptr.To("o")
			p.Spec.SetHostnameAsFQDN = ptr.To(true)
		}, []string{"spec.hostnameOverride: Forbidden"}},
		{"hostnameOverride with hostNetwork", func(p *v1.Pod) {
			p.Spec.HostnameOverride = ptr.To("o")
			p.Spec.HostNetwork = true
		}, []string{"spec.hostnameOverride: Forbidden"}},
		{"mountPropagation HostToContainer", func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].MountPropagation = ptr.To(v1.MountPropagationHostToContainer)
		}, nil},
		{"mountPropagation Bidirectional privileged", func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].MountPropagation = ptr.To(v1.MountPropagationBidirectional)
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: ptr.To(true)}
		}, nil},
		{"mountPropagation Bidirectional not privileged", func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].MountPropagation = ptr.To(v1.MountPropagationBidirectional)
		}, []string{"spec.containers[0].volumeMounts[0].mountPropagation: Forbidden"}},
		{"mountPropagation unknown", func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].MountPropagation = ptr.To(v1.MountPropagationMode("Sideways"))
		}, []string{"spec.containers[0].volumeMounts[0].mountPropagation: Unsupported value"}},
		{"subPathExpr", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].SubPathExpr = "logs/$(POD_NAME)" }, nil},
		{"subPathExpr and subPath", func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].SubPath = "a"
			p.Spec.Containers[0].VolumeMounts[0].SubPathExpr = "$(POD_NAME)"
		}, []string{"spec.containers[0].volumeMounts[0].subPathExpr: Invalid value"}},
		{"subPathExpr absolute", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].SubPathExpr = "/$(POD_NAME)" }, []string{"spec.containers[0].volumeMounts[0].subPathExpr: Invalid value"}},
		{"subPathExpr with ..", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].SubPathExpr = "$(POD_NAME)/../.." }, []string{"spec.containers[0].volumeMounts[0].subPathExpr: Invalid value"}},
		{"subPath absolute with ..", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].SubPath = "/a/../b" }, []string{
			"spec.containers[0].volumeMounts[0].subPath: Invalid value",
			"spec.containers[0].volumeMounts[0].subPath: Invalid value",
		}},
		{"quantity negative", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("-1")
		}, []string{"spec.containers[0].resources.requests[memory]: Invalid value"}},
		{"request above limit", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2")
		}, []string{"spec.containers[0].resources.requests[cpu]: Invalid value"}},
		{"resource not limited", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits["example.com/gpu"] = resource.MustParse("1")
		}, []string{"spec.containers[0].resources.limits[example.com/gpu]: Unsupported value"}},
		{"local storage limits of a pod that may be evicted", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits[v1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
			p.Spec.Volumes[1].EmptyDir.SizeLimit = ptr.To(resource.MustParse("1Gi"))
		}, nil},
		{"resource name invalid", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits["bad name!"] = resource.MustParse("1")
		}, []string{"spec.containers[0].resources.limits[bad name!]: Invalid value"}},
		{"env name invalid", func(p *v1.Pod) { p.Spec.Containers[0].Env[0].Name = "1=A" }, []string{"spec.containers[0].env[0].name: Invalid value"}},
		{"env name required", func(p *v1.Pod) { p.Spec.Containers[0].Env[0].Name = "" }, []string{"spec.containers[0].env[0].name: Required value"}},
		{"env value and valueFrom", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0].ValueFrom = &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}
		}, []string{"spec.containers[0].env[0].valueFrom: Invalid value"}},
		{"env from secret", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0] = v1.EnvVar{Name: "A", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}
		}, nil},
		{"envFrom", func(p *v1.Pod) {
			p.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{}}}
		}, nil},
		{"env fieldRef unsupported", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0] = v1.EnvVar{Name: "A", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}
		}, []string{"spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value"}},
		{"env fieldRef hostIP", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0] = v1.EnvVar{Name: "A", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.hostIP"}}}
		}, nil},
		{"env fieldRef apiVersion", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0] = v1.EnvVar{Name: "A", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "metadata.name"}}}
		}, []string{"spec.containers[0].env[0].valueFrom.fieldRef.apiVersion: Unsupported value"}},
		{"env resourceFieldRef", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0] = v1.EnvVar{Name: "A", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}}
		}, nil},
		{"env resourceFieldRef of another container", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0] = v1.EnvVar{Name: "A", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "init", Resource: "requests.cpu", Divisor: resource.MustParse("1m")}}}
		}, nil},
		{"env resourceFieldRef bad", func(p *v1.Pod) {
			p.Spec.InitContainers[0].Env = []v1.EnvVar{
				{Name: "A", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu", Divisor: resource.MustParse("1Mi")}}},
				{Name: "B", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.hugepages-2Mi"}}},
			}
		}, []string{
			"spec.initContainers[0].env[0].valueFrom.resourceFieldRef.containerName: Not found",
			"spec.initContainers[0].env[0].valueFrom.resourceFieldRef.divisor: Unsupported value",
			"spec.initContainers[0].env[1].valueFrom.resourceFieldRef.resource: Unsupported value",
		}},
		{"env fieldRef label", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[0] = v1.EnvVar{Name: "A", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}}
		}, nil},
		{"container port zero", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 }, []string{"spec.containers[0].ports[0].containerPort: Invalid value"}},
		{"container port too big", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 65536 }, []string{"spec.containers[0].ports[0].containerPort: Invalid value"}},
		{"host port too big", func(p *v1.Pod) { p.Spec.HostNetwork, p.Spec.Containers[0].Ports[0].HostPort = true, 70000 }, []string{"spec.containers[0].ports[0].hostPort: Invalid value"}},
		{"port protocol", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "ICMP" }, []string{"spec.containers[0].ports[0].protocol: Unsupported value"}},
		{"port name invalid", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].Name = "http_" }, []string{"spec.containers[0].ports[0].name: Invalid value"}},
		{"port name duplicate", func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{Name: "http", ContainerPort: 81})
		}, []string{"spec.containers[0].ports[1].name: Duplicate value"}},
	}
	runValidateCases(t, tests)
}

func TestValidatePodNilLookupSkipsClaims(t *testing.T) {
	tests := []struct {
		name   string
		claims ClaimLookup
		want   int
	}{
		{"nil lookup", nil, 0},
		{"lookup knows nothing", func(string, string) bool { return false }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidatePod(validPod(), tt.claims); len(got) != tt.want {
				t.Errorf("got %d errors (%v), want %d", len(got), got, tt.want)
			}
		})
	}
}

// summarize renders each error as "path: type", the part a rule fixes.
func summarize(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+e.Type.String())
	}
	return out
}

func FuzzValidatePod(f *testing.F) {
	seed, _ := json.Marshal(validPod())
	f.Add(seed)
	f.Add([]byte(`{"spec":{"containers":[{},{}],"volumes":[{"name":"a"},{"name":"a","csi":{}}]}}`))
	f.Add([]byte(`{"spec":{"containers":[{"resources":{"requests":{"cpu":"-1"}},"ports":[{"containerPort":-5}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var pod v1.Pod
		if json.Unmarshal(data, &pod) != nil {
			return
		}
		for _, e := range ValidatePod(&pod, knownClaims) {
			if e.Field == "" {
				t.Errorf("error without a field path: %v", e)
			}
		}
		ValidatePod(&pod, nil)
	})
}

func TestValidateVolumeAndClaim(t *testing.T) {
	tests := []struct {
		name string
		errs field.ErrorList
		want []string
	}{
		{"volume ok", ValidateVolume(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}}), nil},
		{"volume name", ValidateVolume(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "PV"}}), []string{"metadata.name: Invalid value"}},
		{"claim ok", ValidateClaim(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv1"}}), nil},
		{"claim volumeName", ValidateClaim(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}),
			[]string{"spec.volumeName: Required value"}},
		{"claim namespace", ValidateClaim(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv1"}}), []string{"metadata.namespace: Required value"}},
	}
	for _, tt := range tests {
		if got := summarize(tt.errs); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestAPIServerPodItemPaths checks the file paths of the API server's
// volumes too: a configMap, secret or token path may not leave the
// volume, and an item's owner (user), which podhost does not set, is
// refused by name.
func TestAPIServerPodItemPaths(t *testing.T) {
	pod := validPod()
	pod.Spec.Volumes[1].VolumeSource = v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "../token"}},
		{ConfigMap: &v1.ConfigMapProjection{Items: []v1.KeyToPath{{Key: "k", Path: "ok", User: ptr.To[int64](1000)}, {Key: "k", Path: "/abs"}}}},
	}}}
	pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
		SecretName: "s", Items: []v1.KeyToPath{{Key: "k", Path: "x/../../y"}}}}})
	got := summarize(ValidateAPIServerPod(pod))
	want := []string{
		"spec.volumes[1].projected.sources[0].serviceAccountToken.path: Invalid value",
		"spec.volumes[1].projected.sources[1].configMap.items[0].user: Forbidden",
		"spec.volumes[1].projected.sources[1].configMap.items[1].path: Invalid value",
		"spec.volumes[2].secret.items[0].path: Invalid value",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ValidateAPIServerPod errors:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestEphemeralContainerResourceFieldRef: an ephemeral container's env
// resourceFieldRef is checked like the others'.
func TestEphemeralContainerResourceFieldRef(t *testing.T) {
	pod := validPod()
	pod.Spec.Volumes = pod.Spec.Volumes[1:]
	pod.Spec.Containers[0].VolumeMounts = nil
	pod.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{
		Name: "dbg", Image: "busybox:1", TerminationMessagePolicy: v1.TerminationMessageReadFile,
		Env: []v1.EnvVar{
			{Name: "OK", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}}},
			{Name: "BAD", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "gone", Resource: "limits.cpu"}}},
		},
	}}}
	got := summarize(ValidateAPIServerPod(pod))
	want := []string{"spec.ephemeralContainers[0].env[1].valueFrom.resourceFieldRef.containerName: Not found"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ValidateAPIServerPod errors:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}
