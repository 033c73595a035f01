package kubenode

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// register creates the Node, or takes over the one that exists, retrying
// with back-off until it succeeds or ctx ends (then it returns ctx.Err()).
func (s *statusLoop) register(ctx context.Context) error {
	a := s.a
	s.report.forget()
	for {
		cctx, cancel := context.WithTimeout(ctx, a.callTimeout())
		n, created, err := s.tryRegister(cctx)
		cancel()
		o := a.result(ctx, &s.hb, heartbeatRegister, err)
		if err == nil {
			if created {
				a.o.Logger.Info("registered the node", "node", a.o.NodeName, "uid", n.UID)
			} else {
				a.o.Logger.Info("took over the existing node", "node", a.o.NodeName, "uid", n.UID)
			}
			s.wrote(n, true)
			return nil
		}
		if !a.sleep(ctx, o.next) {
			return ctx.Err()
		}
	}
}

// tryRegister makes one attempt. A Node that exists (or that the node may
// not create but may read) is taken over: its labels the agent owns and
// its status are patched, its spec, annotations and other labels kept.
func (s *statusLoop) tryRegister(ctx context.Context) (n *v1.Node, created bool, err error) {
	a := s.a
	obs := a.observe(ctx)
	nodes := a.o.Client.CoreV1().Nodes()
	want := applyNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: a.o.NodeName}}, obs, a.o.Clock.Now())
	n, err = nodes.Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		s.prior = nil
		return n, true, nil
	}
	if !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return nil, false, fmt.Errorf("creating node %s: %w", a.o.NodeName, err)
	}
	createErr := err
	n, err = s.post(ctx, obs)
	if errors.Is(err, errNodeGone) {
		// Deleted since, or never there and not ours to create.
		return nil, false, fmt.Errorf("creating node %s: %w", a.o.NodeName, createErr)
	}
	return n, false, err
}
