package csinode

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// NodeIDAnnotation is the Node annotation mapping each CSI driver to its
// ID of the node, as the kubelet writes it.
const NodeIDAnnotation = "csi.volume.kubernetes.io/nodeid"

// Driver is what a CSI driver said of the node (NodeGetInfo).
type Driver struct {
	Name   string
	NodeID string
	// MaxVolumes is max_volumes_per_node; 0 sets no allocatable count.
	MaxVolumes int64
	// Topology is the accessible_topology segments.
	Topology map[string]string
}

// Keeper writes the CSI objects of one node.
type Keeper struct {
	client kubernetes.Interface
	node   string
}

// New is a Keeper of node's objects.
func New(client kubernetes.Interface, node string) *Keeper {
	return &Keeper{client: client, node: node}
}

// Install puts d on the Node (topology labels, node ID annotation) and in
// the CSINode, creating the CSINode when missing.
func (k *Keeper) Install(ctx context.Context, d Driver) error {
	if err := k.updateNode(ctx, func(n *v1.Node) error {
		for key, val := range d.Topology {
			if old, ok := n.Labels[key]; ok && old != val {
				return fmt.Errorf("topology label %s: the node has %q, csi driver %s says %q", key, old, d.Name, val)
			}
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		maps.Copy(n.Labels, d.Topology)
		return setNodeID(n, d.Name, d.NodeID)
	}); err != nil {
		return err
	}
	entry := storagev1.CSINodeDriver{Name: d.Name, NodeID: d.NodeID, TopologyKeys: slices.Sorted(maps.Keys(d.Topology))}
	if d.MaxVolumes > 0 {
		count := int32(min(d.MaxVolumes, int64(1<<31-1)))
		entry.Allocatable = &storagev1.VolumeNodeResources{Count: &count}
	}
	return k.updateCSINode(ctx, func(c *storagev1.CSINode) {
		c.Spec.Drivers = slices.DeleteFunc(c.Spec.Drivers, func(e storagev1.CSINodeDriver) bool { return e.Name == d.Name })
		c.Spec.Drivers = append(c.Spec.Drivers, entry)
	})
}

// Uninstall removes driver from the CSINode and the Node's annotation.
func (k *Keeper) Uninstall(ctx context.Context, driver string) error {
	if err := k.updateCSINode(ctx, func(c *storagev1.CSINode) {
		c.Spec.Drivers = slices.DeleteFunc(c.Spec.Drivers, func(e storagev1.CSINodeDriver) bool { return e.Name == driver })
	}); err != nil {
		return err
	}
	return k.updateNode(ctx, func(n *v1.Node) error { return setNodeID(n, driver, "") })
}

// setNodeID sets driver's entry of the node ID annotation; an empty id
// removes it, and the annotation with its last entry.
func setNodeID(n *v1.Node, driver, id string) error {
	ids := map[string]string{}
	if raw, ok := n.Annotations[NodeIDAnnotation]; ok {
		if err := json.Unmarshal([]byte(raw), &ids); err != nil {
			return fmt.Errorf("node annotation %s: %w", NodeIDAnnotation, err)
		}
	}
	if id == "" {
		delete(ids, driver)
	} else {
		ids[driver] = id
	}
	if len(ids) == 0 {
		delete(n.Annotations, NodeIDAnnotation)
		return nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[NodeIDAnnotation] = string(raw)
	return nil
}

// updateNode applies change to the Node and writes it when it changed.
func (k *Keeper) updateNode(ctx context.Context, change func(*v1.Node) error) error {
	nodes := k.client.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, k.node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading node %s: %w", k.node, err)
		}
		before := n.DeepCopy()
		if err := change(n); err != nil {
			return err
		}
		if maps.Equal(before.Labels, n.Labels) && maps.Equal(before.Annotations, n.Annotations) {
			return nil
		}
		if _, err := nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating node %s: %w", k.node, err)
		}
		return nil
	})
}

// updateCSINode applies change to the node's CSINode, creating it (owned
// by the Node) when missing.
func (k *Keeper) updateCSINode(ctx context.Context, change func(*storagev1.CSINode)) error {
	csiNodes := k.client.StorageV1().CSINodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := csiNodes.Get(ctx, k.node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			n, err := k.client.CoreV1().Nodes().Get(ctx, k.node, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("reading node %s: %w", k.node, err)
			}
			c = &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: k.node, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID,
			}}}}
			change(c)
			if _, err := csiNodes.Create(ctx, c, metav1.CreateOptions{}); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return apierrors.NewConflict(storagev1.Resource("csinodes"), k.node, err)
				}
				return fmt.Errorf("creating csinode %s: %w", k.node, err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading csinode %s: %w", k.node, err)
		}
		before := c.DeepCopy()
		change(c)
		if equalDrivers(before.Spec.Drivers, c.Spec.Drivers) {
			return nil
		}
		if _, err := csiNodes.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating csinode %s: %w", k.node, err)
		}
		return nil
	})
}

func equalDrivers(a, b []storagev1.CSINodeDriver) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
