package podvalidate

import (
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	pullPolicies = []string{string(v1.PullAlways), string(v1.PullIfNotPresent), string(v1.PullNever)}
	protocols    = []string{string(v1.ProtocolTCP), string(v1.ProtocolUDP), string(v1.ProtocolSCTP)}
	// messagePolicies are the terminationMessagePolicy values; unset is File.
	messagePolicies = []string{string(v1.TerminationMessageReadFile), string(v1.TerminationMessageFallbackToLogsOnError)}
)

// validateContainers checks init and app containers; names are unique across
// both lists, as they share one namespace in the runtime.
func validateContainers(spec *v1.PodSpec, volumes sets.Set[string], path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.Containers) == 0 {
		allErrs = append(allErrs, field.Required(path.Child("containers"), "must have at least one container"))
	}
	names := sets.New[string]()
	for i := range spec.InitContainers {
		p := path.Child("initContainers").Index(i)
		allErrs = append(allErrs, validateContainer(&spec.InitContainers[i], names, volumes, p)...)
		allErrs = append(allErrs, validateProbesAndHooks(&spec.InitContainers[i], spec.TerminationGracePeriodSeconds, true, p)...)
		allErrs = append(allErrs, validateRestartRules(&spec.InitContainers[i], p)...)
	}
	for i := range spec.Containers {
		p := path.Child("containers").Index(i)
		allErrs = append(allErrs, validateRestartRules(&spec.Containers[i], p)...)
		allErrs = append(allErrs, validateContainer(&spec.Containers[i], names, volumes, p)...)
		allErrs = append(allErrs, validateProbesAndHooks(&spec.Containers[i], spec.TerminationGracePeriodSeconds, false, p)...)
	}
	targets := names.Clone()
	for i := range spec.EphemeralContainers {
		ec := &spec.EphemeralContainers[i]
		p := path.Child("ephemeralContainers").Index(i)
		allErrs = append(allErrs, validateContainer((*v1.Container)(&ec.EphemeralContainerCommon), names, volumes, p)...)
		if len(ec.RestartPolicyRules) > 0 {
			allErrs = append(allErrs, field.Forbidden(p.Child("restartPolicyRules"), "not supported by podhost on ephemeral containers"))
		}
		if t := ec.TargetContainerName; t != "" && !targets.Has(t) {
			allErrs = append(allErrs, field.NotFound(p.Child("targetContainerName"), t))
		}
	}
	return allErrs
}

func validateContainer(c *v1.Container, names, volumes sets.Set[string], path *field.Path) field.ErrorList {
	allErrs := dnsName(c.Name, path.Child("name"), validation.IsDNS1123Label)
	if c.Name != "" {
		if names.Has(c.Name) {
			allErrs = append(allErrs, field.Duplicate(path.Child("name"), c.Name))
		}
		names.Insert(c.Name)
	}
	if strings.TrimSpace(c.Image) == "" {
		allErrs = append(allErrs, field.Required(path.Child("image"), ""))
	}
	switch c.ImagePullPolicy {
	case "", v1.PullAlways, v1.PullIfNotPresent, v1.PullNever:
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies))
	}
	switch c.TerminationMessagePolicy {
	case "", v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError:
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, messagePolicies))
	}
	if c.TerminationMessagePath != "" && !filepath.IsAbs(c.TerminationMessagePath) {
		allErrs = append(allErrs, field.Invalid(path.Child("terminationMessagePath"), c.TerminationMessagePath, "must be an absolute path"))
	}
	allErrs = append(allErrs, validatePorts(c.Ports, path.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(c, path)...)
	allErrs = append(allErrs, validateResources(&c.Resources, path.Child("resources"))...)
	for i, m := range c.VolumeMounts {
		mp := path.Child("volumeMounts").Index(i)
		switch {
		case m.Name == "":
			allErrs = append(allErrs, field.Required(mp.Child("name"), ""))
		case !volumes.Has(m.Name):
			allErrs = append(allErrs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			allErrs = append(allErrs, field.Required(mp.Child("mountPath"), ""))
		}
		allErrs = append(allErrs, validateSubPath(m, mp)...)
		allErrs = append(allErrs, validateMountPropagation(c, m.MountPropagation, mp.Child("mountPropagation"))...)
	}
	return allErrs
}

// propagations are the mountPropagation values.
var propagations = []string{string(v1.MountPropagationBidirectional), string(v1.MountPropagationHostToContainer), string(v1.MountPropagationNone)}

// validateMountPropagation checks a mount's propagation as the API server
// does: one of the three modes, Bidirectional only in a privileged
// container.
func validateMountPropagation(c *v1.Container, mode *v1.MountPropagationMode, path *field.Path) field.ErrorList {
	if mode == nil {
		return nil
	}
	switch *mode {
	case v1.MountPropagationNone, v1.MountPropagationHostToContainer:
	case v1.MountPropagationBidirectional:
		if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
			return field.ErrorList{field.Forbidden(path, "Bidirectional mount propagation is available only to privileged containers")}
		}
	default:
		return field.ErrorList{field.NotSupported(path, *mode, propagations)}
	}
	return nil
}

// validateSubPath checks a mount's subPath and subPathExpr as the API
// server does: one of them, relative, without a ".." element. The host
// checks the expanded subPathExpr again, and that neither leaves the
// volume through a symbolic link, when it mounts them.
func validateSubPath(m v1.VolumeMount, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m.SubPath != "" {
		allErrs = append(allErrs, localDescendingPath(m.SubPath, path.Child("subPath"))...)
	}
	if m.SubPathExpr != "" {
		if m.SubPath != "" {
			allErrs = append(allErrs, field.Invalid(path.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
		}
		allErrs = append(allErrs, localDescendingPath(m.SubPathExpr, path.Child("subPathExpr"))...)
	}
	return allErrs
}

// localDescendingPath refuses an absolute path and one with a ".."
// element.
func localDescendingPath(p string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if filepath.IsAbs(p) {
		allErrs = append(allErrs, field.Invalid(path, p, "must be a relative path"))
	}
	if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
		allErrs = append(allErrs, field.Invalid(path, p, "must not contain '..'"))
	}
	return allErrs
}

func validatePorts(ports []v1.ContainerPort, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		pp := path.Index(i)
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				allErrs = append(allErrs, field.Invalid(pp.Child("name"), p.Name, msg))
			}
			if names.Has(p.Name) {
				allErrs = append(allErrs, field.Duplicate(pp.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
			allErrs = append(allErrs, field.Invalid(pp.Child("containerPort"), p.ContainerPort, msg))
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				allErrs = append(allErrs, field.Invalid(pp.Child("hostPort"), p.HostPort, msg))
			}
		}
		switch p.Protocol {
		case "", v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP:
		default:
			allErrs = append(allErrs, field.NotSupported(pp.Child("protocol"), p.Protocol, protocols))
		}
	}
	return allErrs
}

// validateEnv checks variable names, and that a fieldRef names a field the
// runtime manager resolves (a resourceFieldRef is checked by
// validateDownwardAPI, which knows the pod's containers; the sources of
// values podhost does not read are refused by Rules).
func validateEnv(c *v1.Container, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, e := range c.Env {
		ep := path.Child("env").Index(i)
		if e.Name == "" {
			allErrs = append(allErrs, field.Required(ep.Child("name"), ""))
		}
		for _, msg := range validation.IsEnvVarName(e.Name) {
			if e.Name != "" {
				allErrs = append(allErrs, field.Invalid(ep.Child("name"), e.Name, msg))
			}
		}
		from := e.ValueFrom
		if from == nil {
			continue
		}
		if e.Value != "" {
			allErrs = append(allErrs, field.Invalid(ep.Child("valueFrom"), "", "may not be specified when value is not empty"))
		}
		if from.FieldRef != nil {
			allErrs = append(allErrs, validateFieldSelector(from.FieldRef, envFieldPaths, ep.Child("valueFrom", "fieldRef"))...)
		}
	}
	return allErrs
}

func validateResources(r *v1.ResourceRequirements, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for name, q := range r.Limits {
		allErrs = append(allErrs, validateQuantity(name, q, path.Child("limits").Key(string(name)))...)
	}
	for name, q := range r.Requests {
		p := path.Child("requests").Key(string(name))
		allErrs = append(allErrs, validateQuantity(name, q, p)...)
		if limit, ok := r.Limits[name]; ok && q.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(p, q.String(), "must be less than or equal to "+string(name)+" limit of "+limit.String()))
		}
	}
	return sortErrors(allErrs)
}

func validateQuantity(name v1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if errs := validation.IsQualifiedName(string(name)); len(errs) > 0 {
		for _, msg := range errs {
			allErrs = append(allErrs, field.Invalid(path, string(name), msg))
		}
	}
	if q.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(path, q.String(), "must be greater than or equal to 0"))
	}
	return allErrs
}

// validateRestartRules checks an init or app container's restartPolicy
// and restartPolicyRules (the kubelet's container restart rules, and its
// RestartAllContainersOnContainerExits): a policy of Always (on an init
// container: a sidecar), OnFailure or Never; rules only with a policy;
// each rule with the action Restart or RestartAllContainers and exit
// codes In or NotIn a list.
func validateRestartRules(c *v1.Container, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if c.RestartPolicy != nil {
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever:
		default:
			allErrs = append(allErrs, field.NotSupported(path.Child("restartPolicy"), *c.RestartPolicy, []string{"Always", "OnFailure", "Never"}))
		}
	}
	if len(c.RestartPolicyRules) > 0 && c.RestartPolicy == nil {
		allErrs = append(allErrs, field.Required(path.Child("restartPolicy"), "must be set with restartPolicyRules"))
	}
	for i, r := range c.RestartPolicyRules {
		rp := path.Child("restartPolicyRules").Index(i)
		switch r.Action {
		case v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers:
		default:
			allErrs = append(allErrs, field.NotSupported(rp.Child("action"), r.Action,
				[]string{string(v1.ContainerRestartRuleActionRestart), string(v1.ContainerRestartRuleActionRestartAllContainers)}))
		}
		switch {
		case r.ExitCodes == nil:
			allErrs = append(allErrs, field.Required(rp.Child("exitCodes"), ""))
		case r.ExitCodes.Operator != v1.ContainerRestartRuleOnExitCodesOpIn && r.ExitCodes.Operator != v1.ContainerRestartRuleOnExitCodesOpNotIn:
			allErrs = append(allErrs, field.NotSupported(rp.Child("exitCodes", "operator"), r.ExitCodes.Operator, []string{"In", "NotIn"}))
		}
	}
	return allErrs
}
