package podvalidate

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func httpProbe(port intstr.IntOrString) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: port}}}
}

func TestValidateProbesAndHooks(t *testing.T) {
	app := func(p *v1.Pod) *v1.Container { return &p.Spec.Containers[0] }
	tests := []struct {
		name   string
		mutate func(p *v1.Pod)
		want   []string
	}{
		{"valid probes of every kind and hooks", func(p *v1.Pod) {
			c := app(p)
			c.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, TerminationGracePeriodSeconds: ptr.To[int64](5)}
			c.ReadinessProbe = httpProbe(intstr.FromString("http"))
			c.StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9090}}, FailureThreshold: 30}
			c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(80)}},
				PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 30}}}
		}, nil},
		{"tcpSocket probe", func(p *v1.Pod) {
			app(p).LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
		}, nil},
		{"no handler", func(p *v1.Pod) { app(p).LivenessProbe = &v1.Probe{} }, []string{"spec.containers[0].livenessProbe: Required value"}},
		{"two handlers", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.Exec = &v1.ExecAction{Command: []string{"true"}}
			app(p).ReadinessProbe = pr
		}, []string{"spec.containers[0].readinessProbe: Forbidden"}},
		{"negative period", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.PeriodSeconds = -1
			app(p).ReadinessProbe = pr
		}, []string{"spec.containers[0].readinessProbe.periodSeconds: Invalid value"}},
		{"liveness successThreshold above 1", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.SuccessThreshold = 2
			app(p).LivenessProbe = pr
		}, []string{"spec.containers[0].livenessProbe.successThreshold: Invalid value"}},
		{"readiness successThreshold above 1 is fine", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.SuccessThreshold = 2
			app(p).ReadinessProbe = pr
		}, nil},
		{"readiness with a grace period", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.TerminationGracePeriodSeconds = ptr.To[int64](3)
			app(p).ReadinessProbe = pr
		}, []string{"spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value"}},
		{"liveness grace period zero", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.TerminationGracePeriodSeconds = ptr.To[int64](0)
			app(p).LivenessProbe = pr
		}, []string{"spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value"}},
		{"unknown named port", func(p *v1.Pod) { app(p).ReadinessProbe = httpProbe(intstr.FromString("metrics")) },
			[]string{"spec.containers[0].readinessProbe.httpGet.port: Not found"}},
		{"port number out of range", func(p *v1.Pod) { app(p).ReadinessProbe = httpProbe(intstr.FromInt32(0)) },
			[]string{"spec.containers[0].readinessProbe.httpGet.port: Invalid value"}},
		{"scheme", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.HTTPGet.Scheme = "FTP"
			app(p).ReadinessProbe = pr
		}, []string{"spec.containers[0].readinessProbe.httpGet.scheme: Unsupported value"}},
		{"header name", func(p *v1.Pod) {
			pr := httpProbe(intstr.FromInt32(80))
			pr.HTTPGet.HTTPHeaders = []v1.HTTPHeader{{Name: "bad header", Value: "x"}}
			app(p).ReadinessProbe = pr
		}, []string{"spec.containers[0].readinessProbe.httpGet.httpHeaders[0].name: Invalid value"}},
		{"grpc port", func(p *v1.Pod) {
			app(p).StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 70000}}}
		}, []string{"spec.containers[0].startupProbe.grpc.port: Invalid value"}},
		{"exec without command", func(p *v1.Pod) {
			app(p).LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{}}}
		}, []string{"spec.containers[0].livenessProbe.exec.command: Required value"}},
		{"probe on an init container", func(p *v1.Pod) { p.Spec.InitContainers[0].ReadinessProbe = httpProbe(intstr.FromInt32(80)) },
			[]string{"spec.initContainers[0].readinessProbe: Forbidden"}},
		{"probes and hooks on a sidecar", func(p *v1.Pod) {
			always := v1.ContainerRestartPolicyAlways
			side := &p.Spec.InitContainers[0]
			side.RestartPolicy, side.ReadinessProbe, side.StartupProbe = &always, httpProbe(intstr.FromInt32(80)), httpProbe(intstr.FromInt32(80))
			side.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 1}}}
		}, nil},
		{"sidecar probe checked like an app container's", func(p *v1.Pod) {
			always := v1.ContainerRestartPolicyAlways
			p.Spec.InitContainers[0].RestartPolicy = &always
			p.Spec.InitContainers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{}}}
		}, []string{"spec.initContainers[0].livenessProbe.exec.command: Required value"}},
		{"init container restartPolicy unknown", func(p *v1.Pod) {
			never := v1.ContainerRestartPolicy("Sometimes")
			p.Spec.InitContainers[0].RestartPolicy = &never
		}, []string{"spec.initContainers[0].restartPolicy: Unsupported value"}},
		{"preStop sleep past the grace period", func(p *v1.Pod) {
			app(p).Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 31}}}
		}, []string{"spec.containers[0].lifecycle.preStop.sleep.seconds: Invalid value"}},
		{"tcpSocket hook", func(p *v1.Pod) {
			app(p).Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
		}, []string{"spec.containers[0].lifecycle.postStart: Required value", "spec.containers[0].lifecycle.postStart.tcpSocket: Forbidden"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := validPod()
			tt.mutate(pod)
			wantErrors(t, ValidatePod(pod, knownClaims), tt.want)
		})
	}
}

// wantErrors compares validation errors, as "path: type" in order, with
// want.
func wantErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	if got := summarize(errs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ValidatePod errors:\n got %q\nwant %q", got, want)
	}
}
