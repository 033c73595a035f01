package node

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/streamproxy"
)

// streamsAPI finds the runtime's streaming URLs for the pods the node
// runs, for the daemon endpoint (host/nodeserver) and the local API.
type streamsAPI struct{ n *Node }

// Streams finds the runtime's streaming URLs for exec, attach and
// port-forward, for the local API.
func (n *Node) Streams() streamproxy.Streams { return streamsAPI{n} }

func (a streamsAPI) Exec(ctx context.Context, ns, name string, uid types.UID, container string, cmd []string, o streamproxy.Options) (*url.URL, error) {
	pod, err := a.container(ns, name, uid, container)
	if err != nil {
		return nil, err
	}
	u, err := a.n.runtime.ExecURL(ctx, pod.UID, container, cmd, runtimemanager.Streams(o))
	return u, notFound(pod, err)
}

func (a streamsAPI) Attach(ctx context.Context, ns, name string, uid types.UID, container string, o streamproxy.Options) (*url.URL, error) {
	pod, err := a.container(ns, name, uid, container)
	if err != nil {
		return nil, err
	}
	u, err := a.n.runtime.AttachURL(ctx, pod.UID, container, runtimemanager.Streams(o))
	return u, notFound(pod, err)
}

func (a streamsAPI) PortForward(ctx context.Context, ns, name string, uid types.UID, ports []int32) (*url.URL, error) {
	pod, err := a.pod(ns, name, uid)
	if err != nil {
		return nil, err
	}
	u, err := a.n.runtime.PortForwardURL(ctx, pod.UID, ports)
	return u, notFound(pod, err)
}

// pod is the pod the node runs under that name (uid, when not empty, must
// be its UID); a pod that only was rejected runs nothing.
func (a streamsAPI) pod(ns, name string, uid types.UID) (*v1.Pod, error) {
	for _, r := range a.n.podRefs() {
		if r.pod.Namespace == ns && r.pod.Name == name && r.err == "" && (uid == "" || r.pod.UID == uid) {
			return r.pod, nil
		}
	}
	return nil, fmt.Errorf("%w: pod %s/%s", localapi.ErrNotFound, ns, name)
}

// container is pod, when its spec has the container.
func (a streamsAPI) container(ns, name string, uid types.UID, container string) (*v1.Pod, error) {
	pod, err := a.pod(ns, name, uid)
	if err != nil {
		return nil, err
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == container {
			return pod, nil
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == container {
			return pod, nil
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == container {
			return pod, nil
		}
	}
	return nil, fmt.Errorf("%w: container %q in pod %s/%s", localapi.ErrNotFound, container, ns, name)
}

// notFound marks the runtime's not-found (a container not created yet, a
// pod with no sandbox) as the API's, naming the pod.
func notFound(pod *v1.Pod, err error) error {
	if errors.Is(err, runtimemanager.ErrNotFound) {
		return fmt.Errorf("%w: pod %s/%s: %w", localapi.ErrNotFound, pod.Namespace, pod.Name, err)
	}
	if err != nil {
		return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
