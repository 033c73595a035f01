package runtimemanager

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/downwardapi"
	"github.com/podhost/podhost/host/expansion"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// containerConfig is the contract's config of one container of the pod.
// podIP is the sandbox's IP (for status.podIP in env).
func (m *Manager) containerConfig(ctx context.Context, pod *v1.Pod, spec *v1.Container, kind string, attempt uint32, imageRef, podIP string) (*runtimev1.ContainerConfig, error) {
	in := envInputs{addrs: downwardapi.Addresses{HostIPs: m.opts.HostIPs}, allocatable: m.opts.Allocatable}
	if podIP != "" {
		in.addrs.PodIPs = []string{podIP}
	}
	var objs EnvObjects
	if m.opts.EnvObjects != nil {
		objs = m.opts.EnvObjects(pod)
	}
	env, err := containerEnv(pod, spec, in, newEnvObjects(ctx, objs, pod.Namespace))
	if err != nil {
		return nil, err
	}
	vars := make(map[string]string, len(env))
	for _, kv := range env {
		vars[kv.GetKey()] = kv.GetValue()
	}
	var mounts []*runtimev1.Mount
	if m.opts.Mounts != nil {
		if mounts, err = m.opts.Mounts(pod, spec, vars); err != nil {
			return nil, fmt.Errorf("%w: mounts of container %q: %w", ErrContainerConfig, spec.Name, err)
		}
	}
	hosts, err := m.etcHostsMount(pod, spec, podIP)
	if err != nil {
		return nil, fmt.Errorf("%w: container %q: %w", ErrContainerConfig, spec.Name, err)
	}
	if hosts != nil {
		mounts = append(mounts, hosts)
	}
	var devices []*runtimev1.Device
	if m.opts.Devices != nil {
		if devices, err = m.opts.Devices(pod, spec); err != nil {
			return nil, fmt.Errorf("%w: devices of container %q: %w", ErrContainerConfig, spec.Name, err)
		}
	}
	return &runtimev1.ContainerConfig{
		Metadata:    &runtimev1.ContainerMetadata{Name: spec.Name, Attempt: attempt},
		Image:       imageRef,
		Command:     expandAll(spec.Command, vars),
		Args:        expandAll(spec.Args, vars),
		WorkingDir:  spec.WorkingDir,
		Envs:        env,
		Mounts:      mounts,
		Devices:     devices,
		Labels:      containerLabels(pod, spec.Name, attempt),
		Annotations: containerAnnotations(pod, spec, kind, attempt),
		LogPath:     ContainerLogPath(spec.Name, attempt),
		Stdin:       spec.Stdin,
		Tty:         spec.TTY,
		Resources:   m.resources(pod, spec),
	}, nil
}

// envInputs are what env values come from besides the pod and the
// ConfigMaps and Secrets.
type envInputs struct {
	// addrs are the pod's IPs (the sandbox's) and the node's.
	addrs downwardapi.Addresses
	// allocatable is the node's, which an unset limit takes in a
	// resourceFieldRef; nil: such variables are a config error.
	allocatable func() (v1.ResourceList, error)
}

// containerEnv resolves the container's env as the kubelet does: the
// variables of envFrom first, then env in order, an env entry replacing a
// variable of the same name, $(VAR) references expanded to the variables
// defined before. Values come from the pod's own fields (fieldRef) and its
// containers' resources (resourceFieldRef), as host/downwardapi resolves
// them, and from the ConfigMaps and Secrets objs reads (configMapKeyRef,
// secretKeyRef, envFrom); a missing optional one defines nothing. The
// service links (servicelinks.go) come last, where no variable of the
// container has their name.
func containerEnv(pod *v1.Pod, spec *v1.Container, in envInputs, objs *envObjects) ([]*runtimev1.KeyValue, error) {
	from, err := objs.envFrom(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: container %q envFrom: %w", ErrContainerConfig, spec.Name, err)
	}
	services, err := objs.serviceEnv(pod)
	if err != nil {
		return nil, fmt.Errorf("%w: container %q: %w", ErrContainerConfig, spec.Name, err)
	}
	// The service links may be referred to; the container's own
	// variables replace them.
	vars := make(map[string]string, len(services))
	for _, kv := range services {
		vars[kv.key] = kv.value
	}
	index := map[string]int{}
	out := make([]*runtimev1.KeyValue, 0, len(from)+len(spec.Env))
	set := func(k, v string) {
		vars[k] = v
		if i, ok := index[k]; ok {
			out[i].Value = v
			return
		}
		index[k] = len(out)
		out = append(out, &runtimev1.KeyValue{Key: k, Value: v})
	}
	for _, kv := range from {
		set(kv.key, kv.value)
	}
	for _, e := range spec.Env {
		val := expansion.Expand(e.Value, expansion.Defined(vars))
		if src := e.ValueFrom; src != nil {
			var err error
			ok := true
			if src.ConfigMapKeyRef != nil || src.SecretKeyRef != nil {
				val, ok, err = objs.keyRef(src)
			} else {
				val, err = envFrom(pod, spec, src, in)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: container %q env %q: %w", ErrContainerConfig, spec.Name, e.Name, err)
			}
			if !ok {
				continue
			}
		}
		set(e.Name, val)
	}
	for _, kv := range services {
		if _, own := index[kv.key]; !own {
			index[kv.key] = len(out)
			out = append(out, &runtimev1.KeyValue{Key: kv.key, Value: kv.value})
		}
	}
	return out, nil
}

// envFrom resolves a valueFrom source.
func envFrom(pod *v1.Pod, spec *v1.Container, src *v1.EnvVarSource, in envInputs) (string, error) {
	switch {
	case src.FieldRef != nil:
		return downwardapi.EnvField(pod, src.FieldRef.FieldPath, in.addrs)
	case src.ResourceFieldRef != nil:
		if in.allocatable == nil {
			return "", fmt.Errorf("resourceFieldRef: the node's allocatable resources are not known")
		}
		alloc, err := in.allocatable()
		if err != nil {
			return "", fmt.Errorf("resourceFieldRef: the node's allocatable resources: %w", err)
		}
		return downwardapi.EnvResource(pod, spec, src.ResourceFieldRef, alloc)
	}
	return "", fmt.Errorf("unsupported value source")
}

func expandAll(in []string, vars map[string]string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expansion.Expand(s, expansion.Defined(vars))
	}
	return out
}

// pullPolicy maps imagePullPolicy; unset defaults like the API server:
// Always for an untagged or :latest image, else IfNotPresent.
func pullPolicy(spec *v1.Container) runtimev1.PullPolicy {
	switch spec.ImagePullPolicy {
	case v1.PullAlways:
		return runtimev1.PullPolicy_PULL_POLICY_ALWAYS
	case v1.PullNever:
		return runtimev1.PullPolicy_PULL_POLICY_NEVER
	case v1.PullIfNotPresent:
		return runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT
	}
	if strings.Contains(spec.Image, "@") {
		return runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT
	}
	name := spec.Image[strings.LastIndexByte(spec.Image, '/')+1:]
	_, tag, tagged := strings.Cut(name, ":")
	if !tagged || tag == "latest" {
		return runtimev1.PullPolicy_PULL_POLICY_ALWAYS
	}
	return runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT
}
