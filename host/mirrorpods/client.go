package mirrorpods

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/lifecycle"
)

// Client creates and deletes mirror pods for one node.
type Client struct {
	api      kubernetes.Interface
	nodeName string

	mu      sync.Mutex
	nodeUID types.UID
}

// New returns a client for the node's mirror pods.
func New(api kubernetes.Interface, nodeName string) *Client {
	return &Client{api: api, nodeName: nodeName}
}

var _ lifecycle.MirrorPods = (*Client)(nil)

// node returns this node's UID, read once; a node being deleted gets no
// new mirrors.
func (c *Client) node(ctx context.Context) (types.UID, error) {
	c.mu.Lock()
	uid := c.nodeUID
	c.mu.Unlock()
	if uid != "" {
		return uid, nil
	}
	n, err := c.api.CoreV1().Nodes().Get(ctx, c.nodeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading node %s for its mirror pods' owner: %w", c.nodeName, err)
	}
	if n.DeletionTimestamp != nil {
		return "", fmt.Errorf("node %s is being deleted; no mirror pods are created", c.nodeName)
	}
	c.mu.Lock()
	c.nodeUID = n.UID
	c.mu.Unlock()
	return n.UID, nil
}

// Mirror returns the mirror pod object of a static pod on the node with
// nodeUID.
func Mirror(static *v1.Pod, nodeName string, nodeUID types.UID) *v1.Pod {
	m := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: static.Name, Namespace: static.Namespace,
			Labels: static.Labels, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: nodeName, UID: nodeUID, Controller: ptr.To(true),
			}},
		},
		Spec: *static.Spec.DeepCopy(),
	}
	for k, v := range static.Annotations {
		m.Annotations[k] = v
	}
	m.Annotations[lifecycle.ConfigMirrorAnnotation] = static.Annotations[lifecycle.ConfigHashAnnotation]
	m.Spec.NodeName = nodeName
	return m
}

// CreateMirrorPod creates the mirror of a static pod; one that exists
// already is not an error.
func (c *Client) CreateMirrorPod(ctx context.Context, static *v1.Pod) error {
	if _, ok := static.Annotations[lifecycle.ConfigHashAnnotation]; !ok {
		return fmt.Errorf("static pod %s/%s has no %s annotation", static.Namespace, static.Name, lifecycle.ConfigHashAnnotation)
	}
	uid, err := c.node(ctx)
	if err != nil {
		return err
	}
	_, err = c.api.CoreV1().Pods(static.Namespace).Create(ctx, Mirror(static, c.nodeName, uid), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating mirror pod %s/%s: %w", static.Namespace, static.Name, err)
	}
	return nil
}

// DeleteMirrorPod deletes the mirror pod at once, with its UID as a
// precondition; a mirror that is gone is not an error.
func (c *Client) DeleteMirrorPod(ctx context.Context, mirror *v1.Pod) error {
	err := c.api.CoreV1().Pods(mirror.Namespace).Delete(ctx, mirror.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &mirror.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting mirror pod %s/%s (uid %s): %w", mirror.Namespace, mirror.Name, mirror.UID, err)
	}
	return nil
}
