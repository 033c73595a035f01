package podvalidate

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// validateProbesAndHooks checks the three probes and the two lifecycle
// hooks of a container. A zero probe field means the kubelet's default
// (timeoutSeconds 1, periodSeconds 10, successThreshold 1,
// failureThreshold 3), as the API server would have set it; ordinary init
// containers may not have probes nor hooks, sidecars (restartPolicy
// Always) may, as app containers (validateRestartRules checks the
// restartPolicy itself).
func validateProbesAndHooks(c *v1.Container, podGrace *int64, init bool, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if init && c.RestartPolicy != nil {
		init = *c.RestartPolicy != v1.ContainerRestartPolicyAlways
	}
	probes := []struct {
		name  string
		probe *v1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}}
	for _, p := range probes {
		if p.probe == nil {
			continue
		}
		pp := path.Child(p.name)
		if init {
			allErrs = append(allErrs, field.Forbidden(pp, "may not be set for init containers"))
			continue
		}
		allErrs = append(allErrs, validateProbe(c, p.probe, p.name == "readinessProbe", pp)...)
	}
	if lc := c.Lifecycle; lc != nil {
		if init && (lc.PostStart != nil || lc.PreStop != nil) {
			allErrs = append(allErrs, field.Forbidden(path.Child("lifecycle"), "may not be set for init containers"))
			return allErrs
		}
		grace := ptr.Deref(podGrace, v1.DefaultTerminationGracePeriodSeconds)
		if lc.PostStart != nil {
			allErrs = append(allErrs, validateHook(c, lc.PostStart, grace, path.Child("lifecycle", "postStart"))...)
		}
		if lc.PreStop != nil {
			allErrs = append(allErrs, validateHook(c, lc.PreStop, grace, path.Child("lifecycle", "preStop"))...)
		}
	}
	return allErrs
}

func validateProbe(c *v1.Container, p *v1.Probe, readiness bool, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
		if f.v < 0 {
			allErrs = append(allErrs, field.Invalid(path.Child(f.name), f.v, "must be greater than or equal to 0"))
		}
	}
	if !readiness && p.SuccessThreshold > 1 {
		allErrs = append(allErrs, field.Invalid(path.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
	}
	if g := p.TerminationGracePeriodSeconds; g != nil {
		switch {
		case readiness:
			allErrs = append(allErrs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must not be set for readinessProbes"))
		case *g <= 0:
			allErrs = append(allErrs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
		}
	}
	h := p.ProbeHandler
	n, errs := validateExecOrHTTP(c, h.Exec, h.HTTPGet, path)
	allErrs = append(allErrs, errs...)
	if h.TCPSocket != nil {
		n++
		allErrs = append(allErrs, validatePort(c, h.TCPSocket.Port, path.Child("tcpSocket", "port"))...)
	}
	if h.GRPC != nil {
		n++
		for _, msg := range validation.IsValidPortNum(int(h.GRPC.Port)) {
			allErrs = append(allErrs, field.Invalid(path.Child("grpc", "port"), h.GRPC.Port, msg))
		}
	}
	return append(allErrs, exactlyOne(n, "exec, httpGet, tcpSocket, grpc", path)...)
}

func validateHook(c *v1.Container, h *v1.LifecycleHandler, grace int64, path *field.Path) field.ErrorList {
	n, allErrs := validateExecOrHTTP(c, h.Exec, h.HTTPGet, path)
	if h.Sleep != nil {
		n++
		if s := h.Sleep.Seconds; s < 0 || s > grace {
			allErrs = append(allErrs, field.Invalid(path.Child("sleep", "seconds"), s,
				fmt.Sprintf("must be non-negative and at most the pod's terminationGracePeriodSeconds (%d)", grace)))
		}
	}
	return append(allErrs, exactlyOne(n, "exec, httpGet, sleep", path)...)
}

// validateExecOrHTTP checks the two handlers probes and hooks share and
// counts those set.
func validateExecOrHTTP(c *v1.Container, exec *v1.ExecAction, get *v1.HTTPGetAction, path *field.Path) (int, field.ErrorList) {
	var allErrs field.ErrorList
	n := 0
	if exec != nil {
		n++
		allErrs = append(allErrs, validateExec(exec, path.Child("exec"))...)
	}
	if get != nil {
		n++
		allErrs = append(allErrs, validateHTTPGet(c, get, path.Child("httpGet"))...)
	}
	return n, allErrs
}

func exactlyOne(n int, kinds string, path *field.Path) field.ErrorList {
	switch {
	case n == 0:
		return field.ErrorList{field.Required(path, "must specify a handler type: one of "+kinds)}
	case n > 1:
		return field.ErrorList{field.Forbidden(path, "may not specify more than 1 handler type")}
	}
	return nil
}

func validateExec(e *v1.ExecAction, path *field.Path) field.ErrorList {
	if len(e.Command) == 0 {
		return field.ErrorList{field.Required(path.Child("command"), "")}
	}
	return nil
}

func validateHTTPGet(c *v1.Container, g *v1.HTTPGetAction, path *field.Path) field.ErrorList {
	allErrs := validatePort(c, g.Port, path.Child("port"))
	switch g.Scheme {
	case "", v1.URISchemeHTTP, v1.URISchemeHTTPS:
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("scheme"), g.Scheme, []string{string(v1.URISchemeHTTP), string(v1.URISchemeHTTPS)}))
	}
	for i, h := range g.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(h.Name) {
			allErrs = append(allErrs, field.Invalid(path.Child("httpHeaders").Index(i).Child("name"), h.Name, msg))
		}
	}
	return allErrs
}

// validatePort accepts a port number or the name of one of the
// container's ports.
func validatePort(c *v1.Container, port intstr.IntOrString, path *field.Path) field.ErrorList {
	if port.Type == intstr.Int {
		var allErrs field.ErrorList
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(path, port.IntValue(), msg))
		}
		return allErrs
	}
	if msgs := validation.IsValidPortName(port.StrVal); len(msgs) > 0 {
		var allErrs field.ErrorList
		for _, msg := range msgs {
			allErrs = append(allErrs, field.Invalid(path, port.StrVal, msg))
		}
		return allErrs
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return nil
		}
	}
	return field.ErrorList{field.NotFound(path, port.StrVal)}
}
