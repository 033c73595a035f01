package kubenode

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// leaseJitter is the share of RenewInterval added at random to each wait,
// the kubelet's.
const leaseJitter = 0.04

// leaseLoop renews the Lease until ctx ends: at once, then every
// RenewInterval, sooner after a failure.
func (a *Agent) leaseLoop(ctx context.Context) {
	hb := heartbeat{interval: a.o.RenewInterval, jitter: leaseJitter, rand: a.rand}
	var latest *coordinationv1.Lease
	for {
		cctx, cancel := context.WithTimeout(ctx, a.callTimeout())
		l, err := a.renewLease(cctx, latest)
		cancel()
		if err == nil {
			latest = l
			a.metrics.leaseRenewals.Inc()
		}
		if !a.sleep(ctx, a.result(ctx, &hb, heartbeatLease, err).next) {
			return
		}
	}
}

// renewLease renews the Lease from latest, the one last written, without
// reading it first; when there is none, or latest is stale (a conflict) or
// gone, it reads the Lease and renews that, or creates it.
func (a *Agent) renewLease(ctx context.Context, latest *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := a.o.Client.CoordinationV1().Leases(v1.NamespaceNodeLease)
	if latest != nil {
		l, err := leases.Update(ctx, a.renewed(latest), metav1.UpdateOptions{})
		if err == nil {
			return l, nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("renewing lease %s/%s: %w", v1.NamespaceNodeLease, a.o.NodeName, err)
		}
	}
	cur, err := leases.Get(ctx, a.o.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		fresh := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: a.o.NodeName, Namespace: v1.NamespaceNodeLease}}
		l, err := leases.Create(ctx, a.renewed(fresh), metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("creating lease %s/%s: %w", v1.NamespaceNodeLease, a.o.NodeName, err)
		}
		if latest != nil {
			a.o.Logger.Info("recreated the node's lease, which was deleted", "node", a.o.NodeName)
		}
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading lease %s/%s: %w", v1.NamespaceNodeLease, a.o.NodeName, err)
	}
	l, err := leases.Update(ctx, a.renewed(cur), metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("renewing lease %s/%s: %w", v1.NamespaceNodeLease, a.o.NodeName, err)
	}
	return l, nil
}

// renewed returns a copy of l renewed now: held by the node for
// LeaseDuration, owned by the Node object.
func (a *Agent) renewed(l *coordinationv1.Lease) *coordinationv1.Lease {
	l = l.DeepCopy()
	l.Spec.HolderIdentity = ptr.To(a.o.NodeName)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(a.o.LeaseDuration.Seconds()))
	l.Spec.RenewTime = &metav1.MicroTime{Time: a.o.Clock.Now()}
	if uid := a.nodeUID(); uid != "" {
		l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: a.o.NodeName, UID: uid}}
	}
	return l
}
