package podvalidate

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Class says what podhost does with a field of the pod.
type Class int

// The two classes every field of the pod is in.
const (
	// Honoured: podhost acts on the field as the kubelet does. Some
	// values of an honoured field may still be refused by the checks of
	// this package (a negative uid, an unknown capability); the rule's
	// note says which.
	Honoured Class = iota + 1
	// Refused: a pod that sets the field (to anything but the values
	// the rule allows) is refused at admission, naming the field.
	Refused
)

func (c Class) String() string {
	switch c {
	case Honoured:
		return "honoured"
	case Refused:
		return "refused"
	}
	return "unclassified"
}

// Rule is what podhost does with one field.
type Rule struct {
	Class Class
	// Note says how the field is honoured, or why it is refused.
	Note string
	// Opaque: an honoured field whose value podhost takes as a whole (a
	// scheduler's field, or one checked where it is used); its type's
	// fields are not classified one by one.
	Opaque bool
	// Allow, for a refused field, accepts the values that mean "not
	// asked for" beside the zero value (the API server's default).
	Allow func(v reflect.Value) bool
	// AllowNote says which values Allow accepts, for the table.
	AllowNote string
}

func honoured(note string) Rule { return Rule{Class: Honoured, Note: note} }
func opaque(note string) Rule   { return Rule{Class: Honoured, Note: note, Opaque: true} }
func refused(note string) Rule  { return Rule{Class: Refused, Note: note} }

// refusedUnless is a refused field whose listed values are accepted.
func refusedUnless(note string, allowed ...string) Rule {
	return Rule{Class: Refused, Note: note, AllowNote: strings.Join(allowed, ", "), Allow: func(v reflect.Value) bool {
		for v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		s := fmt.Sprint(v.Interface())
		for _, a := range allowed {
			if s == a {
				return true
			}
		}
		return false
	}}
}

// Roots are the types whose fields the rules classify: a field of a
// k8s.io/api/core/v1 struct type reached through an honoured, not opaque
// field is classified too.
var Roots = []reflect.Type{
	reflect.TypeFor[v1.PodSpec](),
	reflect.TypeFor[v1.EphemeralContainer](),
}

// Rules classifies every field of the pod that podhost receives, keyed
// "Type.jsonName". docs/pod-fields.md is this table
// (TestFieldTableIsComplete checks both).
var Rules = map[string]Rule{
	// PodSpec
	"PodSpec.volumes":                       honoured("mounted by the volume manager"),
	"PodSpec.initContainers":                honoured("run in order before the app containers; restartPolicy Always makes a sidecar"),
	"PodSpec.containers":                    honoured("run by the runtime manager"),
	"PodSpec.ephemeralContainers":           honoured("API-server pods only (the ephemeralcontainers subresource): each starts once in the running pod, never restarted, stopped with it"),
	"PodSpec.restartPolicy":                 honoured("restart policy of the pod worker"),
	"PodSpec.terminationGracePeriodSeconds": honoured("grace period of stops"),
	"PodSpec.activeDeadlineSeconds":         honoured("from the pod's start on the node: then Failed, reason DeadlineExceeded, its containers stopped; an update takes effect (API-server pods)"),
	"PodSpec.dnsPolicy":                     honoured("written to the sandbox's DNS config"),
	"PodSpec.nodeSelector":                  opaque("checked at admission against the node's labels"),
	"PodSpec.serviceAccountName":            honoured("service account tokens of projected volumes (API pods), env fieldRef"),
	"PodSpec.serviceAccount":                honoured("deprecated alias of serviceAccountName, set by the API server"),
	"PodSpec.automountServiceAccountToken":  honoured("acted on by the API server's admission, which adds the token volume; the kubelet reads nothing of it"),
	"PodSpec.nodeName":                      honoured("checked at admission: a pod bound to another node is rejected"),
	"PodSpec.hostNetwork":                   honoured("the sandbox uses the node's network namespace"),
	"PodSpec.hostPID":                       honoured("the sandbox and every container use the node's PID namespace"),
	"PodSpec.hostIPC":                       honoured("the sandbox and every container use the node's IPC namespace"),
	"PodSpec.shareProcessNamespace":         honoured("the containers share the sandbox's PID namespace; without it each has its own"),
	"PodSpec.securityContext":               honoured("see PodSecurityContext"),
	"PodSpec.imagePullSecrets":              honoured("dockerconfigjson and dockercfg Secrets; the credentials whose registry key matches the image are passed to the runtime's pull, tried in order; a missing Secret is a FailedToRetrieveImagePullSecret event after a failed pull; an image already present is not re-verified against the pod's credentials (the kubelet's KubeletEnsureSecretPulledImages is not done): use imagePullPolicy Always for private images"),
	"PodSpec.hostname":                      honoured("the sandbox's hostname"),
	"PodSpec.subdomain":                     honoured("the pod's FQDN in its /etc/hosts where the host has a cluster domain, as the kubelet"),
	"PodSpec.affinity":                      opaque("required node affinity checked at admission; the rest is the scheduler's"),
	"PodSpec.schedulerName":                 opaque("the scheduler's"),
	"PodSpec.tolerations":                   opaque("NoExecute taints checked at admission; the rest is the scheduler's"),
	"PodSpec.hostAliases":                   honoured("entries of the pod's /etc/hosts, as the kubelet writes them"),

	"PodSpec.priorityClassName":         opaque("the scheduler's; node-pressure eviction ranks pods by it and never evicts a system-critical one, as the kubelet"),
	"PodSpec.priority":                  opaque("the scheduler's; node-pressure eviction ranks pods by it and never evicts a system-critical one, as the kubelet"),
	"PodSpec.dnsConfig":                 opaque("merged into the sandbox's DNS config"),
	"PodSpec.readinessGates":            opaque("the pod is Ready only when its gates' conditions are True"),
	"PodSpec.runtimeClassName":          honoured("checked at admission, passed as the runtime handler"),
	"PodSpec.enableServiceLinks":        honoured("Kubernetes mode: the service variables of the pod's namespace, and always default/kubernetes's, as the kubelet's; standalone: no services, nothing to inject (as a kubelet without an API server)"),
	"PodSpec.preemptionPolicy":          opaque("the scheduler's"),
	"PodSpec.overhead":                  honoured("added to the pod's requests and limits as the kubelet adds it: admission's fit, node-pressure eviction's ranking, and the pod's own cgroup (cpu shares; cpu quota and memory limit where every container or the pod has limits)"),
	"PodSpec.topologySpreadConstraints": opaque("the scheduler's"),
	"PodSpec.setHostnameAsFQDN":         honoured("true makes the sandbox's hostname the pod's FQDN, <hostname>.<subdomain>.<namespace>.svc.<cluster domain>, where the pod has a subdomain, the host a cluster domain and the pod no hostnameOverride, as the kubelet; a FQDN over 64 characters fails the sandbox's creation"),
	"PodSpec.os":                        opaque("checked at admission against the node's OS"),
	"PodSpec.hostUsers":                 refusedUnless("user namespaces are not supported", "true"),
	"PodSpec.schedulingGates":           opaque("the scheduler's"),
	"PodSpec.resourceClaims":            refused("dynamic resource allocation is not supported"),
	"PodSpec.resources":                 {Class: Refused, Note: "pod-level resources other than cpu and memory are not applied", AllowNote: "cpu and memory: the pod's own cgroup is limited by them (made by the runtime plugin), resized in place", Allow: cpuAndMemoryOnly},
	"PodSpec.hostnameOverride":          honoured("the sandbox's hostname, in place of hostname and the pod's name, and its line of /etc/hosts, without the subdomain's FQDN, as the kubelet; a DNS subdomain, not with hostNetwork"),
	"PodSpec.schedulingGroup":           opaque("the scheduler's"),
	"PodSpec.evictionResponders":        refused("EvictionRequest responders (alpha) are not supported"),

	// Container (app and init; EphemeralContainer shares its fields)
	"Container.name":                         honoured("the container's name in the runtime"),
	"Container.image":                        honoured("ensured with imagePullPolicy"),
	"Container.command":                      honoured("$(VAR) expanded"),
	"Container.args":                         honoured("$(VAR) expanded"),
	"Container.workingDir":                   honoured(""),
	"Container.ports":                        honoured("named ports of probes; hostPort only with hostNetwork (no port mapping)"),
	"Container.envFrom":                      honoured("every key of the ConfigMap or Secret, prefixed; env replaces them. A pod of the API server reads them from it with the node's credentials, any other pod from the ConfigMaps and Secrets of the host's sources (manifest directory, local API)"),
	"Container.env":                          honoured("values and fieldRef, $(VAR) expanded"),
	"Container.resources":                    honoured("CPU and memory limits and requests to cgroups; QoS"),
	"Container.resizePolicy":                 honoured("in-place resize: a changed cpu or memory is updated in the running container, or restarts it when its policy is RestartContainer"),
	"Container.restartPolicy":                honoured("Always on an init container makes it a sidecar; Never or OnFailure on an init container, or any on an app container, replaces the pod's restartPolicy for it"),
	"Container.restartPolicyRules":           honoured("init, sidecar and app containers: the first rule whose exit codes match decides; action Restart restarts the container, RestartAllContainers stops the pod's init and app containers and starts the pod again from its first init container in the same sandbox (volumes kept), each counted as restarted, the pod reporting AllContainersRestarting meanwhile"),
	"Container.volumeMounts":                 honoured("bind mounts of the pod's volumes"),
	"Container.volumeDevices":                opaque("raw block volumes given as devices"),
	"Container.livenessProbe":                honoured("run by the prober"),
	"Container.readinessProbe":               honoured("run by the prober"),
	"Container.startupProbe":                 honoured("run by the prober"),
	"Container.lifecycle":                    honoured("postStart and preStop hooks"),
	"Container.terminationMessagePath":       honoured("an empty file bind-mounted there (an absolute path); its last 4096 bytes are the exited container's message"),
	"Container.terminationMessagePolicy":     honoured("File, or FallbackToLogsOnError: the end of the log (80 lines, 2048 bytes) when the file is empty and the exit code not 0"),
	"Container.imagePullPolicy":              honoured("the runtime's pull policy"),
	"Container.securityContext":              honoured("see SecurityContext"),
	"Container.stdin":                        honoured("the runtime keeps stdin open"),
	"Container.stdinOnce":                    refusedUnless("nothing attaches to stdin", "false"),
	"Container.tty":                          honoured("the runtime allocates a TTY"),
	"EphemeralContainer.targetContainerName": honoured("joins that container's PID namespace (when the pod shares none)"),

	"ContainerPort.name": honoured("named ports of probes and hooks"),

	"ContainerRestartRule.action":              honoured("Restart, RestartAllContainers"),
	"ContainerRestartRule.exitCodes":           honoured("the exit codes the rule matches"),
	"ContainerRestartRuleOnExitCodes.operator": honoured("In or NotIn"),
	"ContainerRestartRuleOnExitCodes.values":   honoured("the exit codes"),
	"ContainerResizePolicy.resourceName":       honoured("cpu or memory: the resource whose change the policy rules"),
	"ContainerResizePolicy.restartPolicy":      honoured("NotRequired: updated in place; RestartContainer: the container is restarted with its new resources"),

	"ContainerPort.hostPort":      honoured("checked at admission for conflicts; refused without hostNetwork (no port mapping)"),
	"ContainerPort.containerPort": honoured("informational, as in the kubelet"),
	"ContainerPort.protocol":      honoured("informational, as in the kubelet"),
	"ContainerPort.hostIP":        refused("no port mapping"),

	"EnvVar.name":                         honoured(""),
	"EnvVar.value":                        honoured("$(VAR) expanded"),
	"EnvVar.valueFrom":                    honoured("see EnvVarSource"),
	"EnvVarSource.fieldRef":               opaque("metadata.name, .namespace, .uid, labels['k'], annotations['k'], spec.nodeName, spec.serviceAccountName, status.podIP(s), status.hostIP(s) (a host-network pod's podIP is the node's); other paths refused"),
	"EnvVarSource.resourceFieldRef":       opaque("limits and requests of cpu, memory and ephemeral-storage, divided by the divisor and rounded up; an unset limit is the node's allocatable"),
	"EnvVarSource.configMapKeyRef":        honoured("read when the container is created: a pod of the API server's from it with the node's credentials, any other pod's from the ConfigMaps of the manifest directory and the local API"),
	"EnvVarSource.secretKeyRef":           honoured("read when the container is created: a pod of the API server's from it with the node's credentials, any other pod's from the Secrets of the manifest directory and the local API"),
	"EnvFromSource.prefix":                honoured("prepended to each key"),
	"EnvFromSource.configMapRef":          honoured(""),
	"EnvFromSource.secretRef":             honoured(""),
	"ConfigMapEnvSource.optional":         honoured("a missing ConfigMap defines nothing"),
	"SecretEnvSource.optional":            honoured("a missing Secret defines nothing"),
	"ConfigMapKeySelector.key":            honoured("a missing key fails the container's creation (CreateContainerConfigError) unless optional"),
	"ConfigMapKeySelector.optional":       honoured("a missing ConfigMap or key defines nothing"),
	"SecretKeySelector.key":               honoured("a missing key fails the container's creation (CreateContainerConfigError) unless optional"),
	"SecretKeySelector.optional":          honoured("a missing Secret or key defines nothing"),
	"EnvVarSource.fileKeyRef":             refused("env from files is not supported"),
	"ResourceRequirements.limits":         opaque("cpu and memory to cgroups; ephemeral-storage by eviction (a container over its own limit or the pod over the sum is Failed, reason Evicted), refused on a static pod, which is never evicted; other resources refused"),
	"ResourceRequirements.requests":       opaque("cpu, memory and ephemeral-storage counted at admission; cpu and memory to cgroups; other resources refused"),
	"ResourceRequirements.claims":         refused("dynamic resource allocation is not supported"),
	"VolumeMount.name":                    honoured(""),
	"VolumeMount.readOnly":                honoured("a read-only bind mount"),
	"VolumeMount.recursiveReadOnly":       refusedUnless("recursive read-only mounts are not supported", string(v1.RecursiveReadOnlyDisabled)),
	"VolumeMount.mountPath":               honoured(""),
	"VolumeMount.subPath":                 honoured("created when missing; relative without '..'; may not leave the volume, symbolic links included; bind-mounted from a descriptor opened without following links under the pod's volume-subpaths directory, as the kubelet's protection against a link swapped in (CVE-2017-1002101), and given to the runtime from there; a refused one is CreateContainerConfigError"),
	"VolumeMount.mountPropagation":        honoured("None (private), HostToContainer (rslave: the host's later mounts under the volume show in the container) or Bidirectional (rshared, privileged containers only); the host makes its root dir a shared mount at start, as the kubelet its own (docs/operations.md)"),
	"VolumeMount.subPathExpr":             honoured("$(VAR) expanded from the container's env (downward API included) when the container is created, a variable undefined or empty failing it (CreateContainerConfigError) until it has a value; then as subPath. Not with subPath; relative without '..', before and after expansion"),
	"VolumeMount.bindMountOptions":        refused("bind mount options are not supported"),
	"Probe.initialDelaySeconds":           honoured(""),
	"Probe.timeoutSeconds":                honoured(""),
	"Probe.periodSeconds":                 honoured(""),
	"Probe.successThreshold":              honoured(""),
	"Probe.failureThreshold":              honoured(""),
	"Probe.terminationGracePeriodSeconds": honoured("grace period of a kill after a failed liveness or startup probe"),
	"ProbeHandler.exec":                   opaque("run with the runtime's ExecSync"),
	"ProbeHandler.httpGet":                opaque(""),
	"ProbeHandler.tcpSocket":              opaque(""),
	"ProbeHandler.grpc":                   opaque(""),
	"Lifecycle.postStart":                 honoured(""),
	"Lifecycle.preStop":                   honoured(""),
	"Lifecycle.stopSignal":                refused("the stop signal is the image's"),
	"LifecycleHandler.exec":               opaque("run with the runtime's ExecSync"),
	"LifecycleHandler.httpGet":            opaque(""),
	"LifecycleHandler.tcpSocket":          refused("a tcpSocket hook is never run"),
	"LifecycleHandler.sleep":              opaque(""),

	// HostAlias
	"HostAlias.ip":        honoured("an IP address"),
	"HostAlias.hostnames": honoured("DNS names, on the address's line"),

	// PodSecurityContext
	"PodSecurityContext.seLinuxOptions":           refusedWithSELinux,
	"PodSecurityContext.windowsOptions":           refused("Windows options on a Linux node"),
	"PodSecurityContext.runAsUser":                honoured("the containers' uid where they set none; the sandbox's"),
	"PodSecurityContext.runAsGroup":               honoured("the containers' gid where they set none"),
	"PodSecurityContext.runAsNonRoot":             honoured("where the container sets none: verified against runAsUser and the image's user before the container is created (CreateContainerConfigError)"),
	"PodSecurityContext.supplementalGroups":       honoured("added to every container's groups"),
	"PodSecurityContext.supplementalGroupsPolicy": refusedUnless("Strict is not supported by the runtime", string(v1.SupplementalGroupsPolicyMerge)),
	"PodSecurityContext.fsGroup":                  honoured("a supplemental group of the sandbox and every container (before supplementalGroups); emptyDir (disk and Memory), projected, configMap, secret and downwardAPI volumes are given to it at set-up as the kubelet gives them (group rw, read only for the read-only API volumes, setgid directories, symbolic links never followed); writable FC and iSCSI filesystem volumes after the plugin publishes them; writable CSI filesystem volumes by the driver's fsGroupPolicy (its CSIDriver object in Kubernetes mode; default ReadWriteOnceWithFSType: an fsType and a ReadWriteOnce(Pod) or inline volume; File always; None never); hostPath, block and read-only volumes never. Not done: a driver's VOLUME_MOUNT_GROUP capability (the host walks instead of passing the group to the driver)"),
	"PodSecurityContext.sysctls":                  honoured("set in the sandbox; the safe set always, others only when the host config allows them (allowedUnsafeSysctls), else refused at admission (SysctlForbidden)"),
	"PodSecurityContext.fsGroupChangePolicy":      honoured("OnRootMismatch skips the walk of a volume whose root already has the group and mode; honoured by CSI, FC and iSCSI volumes; emptyDir and the API volumes ignore it and always walk, as in the kubelet"),
	"PodSecurityContext.seccompProfile":           honoured("the containers' profile where they set none, and the sandbox's; Localhost from the node's seccompProfileRoot, refused at admission when the file does not exist"),
	"PodSecurityContext.appArmorProfile":          refused("AppArmor profiles are not passed to the runtime (refused on every node, also where AppArmor is enabled)"),
	"PodSecurityContext.seLinuxChangePolicy":      refused("SELinux is not supported"),

	// SecurityContext
	"SecurityContext.capabilities":             honoured("add and drop, names without CAP_ or ALL; an unknown name is refused"),
	"SecurityContext.privileged":               honoured("a privileged container (and sandbox)"),
	"SecurityContext.seLinuxOptions":           refusedWithSELinux,
	"SecurityContext.windowsOptions":           refused("Windows options on a Linux node"),
	"SecurityContext.runAsUser":                honoured("the process' uid; 0 to 2147483647"),
	"SecurityContext.runAsGroup":               honoured("the process' gid; 0 to 2147483647"),
	"SecurityContext.runAsNonRoot":             honoured("verified against runAsUser and the image's user before the container is created (CreateContainerConfigError)"),
	"SecurityContext.readOnlyRootFilesystem":   honoured("a read-only root filesystem"),
	"SecurityContext.allowPrivilegeEscalation": honoured("false sets no_new_privs"),
	"SecurityContext.procMount":                refusedUnless("an unmasked /proc is not supported: the API server allows Unmasked only with hostUsers: false, and user namespaces are not supported: CRI's need containerd 2.0 or later (the 1.6 here ignores the request, so the pod would run in the node's user namespace with an unmasked /proc), and the runtime contract carries none", string(v1.DefaultProcMount)),
	"SecurityContext.seccompProfile":           honoured("RuntimeDefault, Unconfined (also when set nowhere, as the kubelet), or Localhost from the node's seccompProfileRoot"),
	"SecurityContext.appArmorProfile":          refused("AppArmor profiles are not passed to the runtime (refused on every node, also where AppArmor is enabled)"),

	"Capabilities.add":                honoured(""),
	"Capabilities.drop":               honoured(""),
	"SeccompProfile.type":             honoured("RuntimeDefault, Unconfined or Localhost"),
	"SeccompProfile.localhostProfile": honoured("a relative path under the node's seccompProfileRoot; it must exist"),
	"Sysctl.name":                     honoured("with . or / separators"),
	"Sysctl.value":                    honoured(""),

	// Volume and its sources
	"Volume.name":                        honoured(""),
	"VolumeSource.hostPath":              honoured("bind-mounted; type checked"),
	"VolumeSource.emptyDir":              honoured("a directory, or tmpfs with medium Memory"),
	"VolumeSource.persistentVolumeClaim": honoured("a static claim bound to a PersistentVolume known to podhost"),
	"VolumeSource.csi":                   honoured("an inline CSI volume"),
	"VolumeSource.projected":             honoured("downwardAPI, configMap and secret sources for every pod; serviceAccountToken for pods of the API server only (the token comes from it)"),
	"VolumeSource.configMap":             honoured("a pod of the API server reads it from it, any other pod from the ConfigMaps of the manifest directory and the local API; a missing one (not optional) keeps the pod ContainerCreating with FailedMount events, retried; the files are rewritten when the ConfigMap changes"),
	"VolumeSource.secret":                honoured("as configMap, from the API server or the Secrets of the manifest directory and the local API"),
	"VolumeSource.downwardAPI":           honoured("also without an API server (the files come from the pod); rewritten when the pod's labels or annotations change"),
	"VolumeSource.gcePersistentDisk":     refused("unsupported volume source"),
	"VolumeSource.awsElasticBlockStore":  refused("unsupported volume source"),
	"VolumeSource.gitRepo":               refused("unsupported volume source"),
	"VolumeSource.nfs":                   refused("unsupported volume source"),
	"VolumeSource.iscsi":                 refused("unsupported inline; give it as a PersistentVolume"),
	"VolumeSource.glusterfs":             refused("unsupported volume source"),
	"VolumeSource.rbd":                   refused("unsupported volume source"),
	"VolumeSource.flexVolume":            refused("unsupported volume source"),
	"VolumeSource.cinder":                refused("unsupported volume source"),
	"VolumeSource.cephfs":                refused("unsupported volume source"),
	"VolumeSource.flocker":               refused("unsupported volume source"),
	"VolumeSource.fc":                    refused("unsupported inline; give it as a PersistentVolume"),
	"VolumeSource.azureFile":             refused("unsupported volume source"),
	"VolumeSource.vsphereVolume":         refused("unsupported volume source"),
	"VolumeSource.quobyte":               refused("unsupported volume source"),
	"VolumeSource.azureDisk":             refused("unsupported volume source"),
	"VolumeSource.photonPersistentDisk":  refused("unsupported volume source"),
	"VolumeSource.portworxVolume":        refused("unsupported volume source"),
	"VolumeSource.scaleIO":               refused("unsupported volume source"),
	"VolumeSource.storageos":             refused("unsupported volume source"),
	"VolumeSource.ephemeral":             refused("generic ephemeral volumes are not supported"),
	"VolumeSource.image":                 refused("image volumes are not supported"),

	"HostPathVolumeSource.path":                   honoured(""),
	"HostPathVolumeSource.type":                   honoured("checked before the mount"),
	"EmptyDirVolumeSource.medium":                 honoured("\"\" or Memory (tmpfs)"),
	"EmptyDirVolumeSource.sizeLimit":              honoured("the tmpfs size with medium Memory; on disk, a pod whose emptyDir uses more is evicted (Failed, reason Evicted), refused on a static pod, which is never evicted"),
	"EmptyDirVolumeSource.mode":                   refused("the directory's mode is not set from it"),
	"PersistentVolumeClaimVolumeSource.claimName": honoured(""),
	"PersistentVolumeClaimVolumeSource.readOnly":  honoured(""),
	"CSIVolumeSource.driver":                      honoured(""),
	"CSIVolumeSource.readOnly":                    honoured(""),
	"CSIVolumeSource.fsType":                      honoured(""),
	"CSIVolumeSource.volumeAttributes":            honoured(""),
	"CSIVolumeSource.nodePublishSecretRef":        honoured("the Secret of that name in the pod's namespace, read at each publish (a pod of the API server's from it with the node's credentials, any other pod's from the Secrets of the manifest directory and the local API), its keys and values the secrets of NodePublishVolume; a missing Secret fails the mount (FailedMount naming it) and the mount is retried, as the kubelet"),
	"ProjectedVolumeSource.sources":               honoured(""),
	"ProjectedVolumeSource.defaultMode":           honoured(""),
	"ProjectedVolumeSource.defaultUser":           refused("file ownership is not set"),
	"VolumeProjection.secret":                     opaque("items, optional; checked when the volume is set up; item paths relative without '..', an item's user refused"),
	"VolumeProjection.downwardAPI":                honoured("also without an API server"),
	"DownwardAPIProjection.items":                 honoured(""),
	"DownwardAPIVolumeSource.items":               honoured(""),
	"DownwardAPIVolumeSource.defaultMode":         honoured(""),
	"DownwardAPIVolumeSource.defaultUser":         refused("file ownership is not set"),
	"DownwardAPIVolumeFile.path":                  honoured("relative, without '..' elements, not starting with '..'"),
	"DownwardAPIVolumeFile.fieldRef":              opaque("metadata.name, .namespace, .uid, .labels, .annotations, labels['k'], annotations['k']; other paths refused"),
	"DownwardAPIVolumeFile.resourceFieldRef":      opaque("limits and requests of cpu, memory and ephemeral-storage of the named container, divided by the divisor and rounded up; an unset limit is the node's allocatable"),
	"DownwardAPIVolumeFile.mode":                  honoured(""),
	"DownwardAPIVolumeFile.user":                  refused("file ownership is not set"),
	"VolumeProjection.configMap":                  opaque("items, optional; checked when the volume is set up; item paths relative without '..', an item's user refused"),
	"VolumeProjection.serviceAccountToken":        opaque("a token requested from the API server; path relative without '..', user refused"),
	"VolumeProjection.clusterTrustBundle":         refused("cluster trust bundles are not supported"),
	"VolumeProjection.podCertificate":             refused("pod certificates are not supported"),
	"LocalObjectReference.name":                   honoured(""),
	"ConfigMapVolumeSource.items":                 opaque("paths relative without '..', an item's user refused"),
	"ConfigMapVolumeSource.defaultMode":           honoured(""),
	"ConfigMapVolumeSource.optional":              honoured(""),
	"ConfigMapVolumeSource.defaultUser":           refused("file ownership is not set"),
	"SecretVolumeSource.secretName":               honoured(""),
	"SecretVolumeSource.items":                    opaque("paths relative without '..', an item's user refused"),
	"SecretVolumeSource.defaultMode":              honoured(""),
	"SecretVolumeSource.optional":                 honoured(""),
	"SecretVolumeSource.defaultUser":              refused("file ownership is not set"),
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// inline reports whether f is an embedded struct whose fields are the
// parent's (json ",inline").
func inline(f reflect.StructField) bool { return f.Anonymous && jsonName(f) == "" }

// containerType is the type whose rules an ephemeral container's common
// fields follow.
var containerType = reflect.TypeFor[v1.Container]()

// ruleType maps a type onto the type its rules are written for.
func ruleType(t reflect.Type) reflect.Type {
	if t == reflect.TypeFor[v1.EphemeralContainerCommon]() {
		return containerType
	}
	return t
}

// classified reports whether t is a struct type of k8s.io/api/core/v1,
// the types whose fields Rules classifies when reached.
func classified(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == containerType.PkgPath()
}

// elem is the struct type behind pointers and slices.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}

// refusedFields walks the pod spec and returns a Forbidden error for each
// refused field that is set to a value its rule does not allow.
func refusedFields(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	return walkRefused(reflect.ValueOf(spec).Elem(), path)
}

func walkRefused(v reflect.Value, path *field.Path) field.ErrorList {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return walkRefused(v.Elem(), path)
	case reflect.Slice:
		var allErrs field.ErrorList
		for i := 0; i < v.Len(); i++ {
			allErrs = append(allErrs, walkRefused(v.Index(i), path.Index(i))...)
		}
		return allErrs
	case reflect.Struct:
	default:
		return nil
	}
	t := v.Type()
	rt := ruleType(t)
	var allErrs field.ErrorList
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fv := v.Field(i)
		if inline(f) {
			allErrs = append(allErrs, walkRefused(fv, path)...)
			continue
		}
		r, ok := Rules[rt.Name()+"."+jsonName(f)]
		fp := path.Child(jsonName(f))
		switch {
		case !ok:
			// TestFieldTableIsComplete keeps this from happening; refuse
			// rather than drop should a field slip through.
			if !fv.IsZero() {
				allErrs = append(allErrs, field.Forbidden(fp, "podhost does not know this field"))
			}
		case r.Class == Refused:
			if !fv.IsZero() && (r.Allow == nil || !r.Allow(fv)) {
				allErrs = append(allErrs, field.Forbidden(fp, "not supported by podhost: "+r.Note))
			}
		case !r.Opaque && classified(elem(f.Type)):
			allErrs = append(allErrs, walkRefused(fv, fp)...)
		}
	}
	return allErrs
}

// refusedWithSELinux is seLinuxOptions: podhost applies no SELinux label,
// so the field is refused on a node where SELinux is enabled. On a node
// without SELinux the kubelet's runtime applies no label either (containerd
// labels only where SELinux is enabled), and the upstream suite sets the
// field on most of its pods: there it is accepted, as the kubelet does.
var refusedWithSELinux = Rule{Class: Refused, Note: "SELinux labels are not applied",
	AllowNote: "any value on a node without SELinux, where the kubelet's runtime applies none either",
	Allow:     func(reflect.Value) bool { return !selinuxEnabled() }}

// selinuxEnabled says whether the node runs SELinux: its filesystem is
// mounted where the kernel puts it.
var selinuxEnabled = func() bool {
	_, err := os.Stat("/sys/fs/selinux/enforce")
	return err == nil
}

// cpuAndMemoryOnly accepts pod-level resources that request and limit
// only cpu and memory, which the pod cgroup applies.
func cpuAndMemoryOnly(v reflect.Value) bool {
	r, ok := v.Interface().(*v1.ResourceRequirements)
	if !ok || r == nil {
		return true
	}
	for _, l := range []v1.ResourceList{r.Requests, r.Limits} {
		for name := range l {
			if name != v1.ResourceCPU && name != v1.ResourceMemory {
				return false
			}
		}
	}
	return len(r.Claims) == 0
}
