package kubenode

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxPostTries is how many times one status round reads and patches when
// the Node keeps changing under it.
const maxPostTries = 5

// errNodeGone says the Node was deleted: it must be registered again.
var errNodeGone = errors.New("the node object is gone")

// statusLoop registers the Node and keeps its status. It runs on one
// goroutine.
type statusLoop struct {
	a      *Agent
	report reportPolicy
	hb     heartbeat
	last   *v1.Node // as last written
	// prior holds the conditions the API server had before the last
	// write that succeeded (none for a Node just created): what that
	// write's events compare against.
	prior []v1.NodeCondition
}

// run measures every StatusFrequency and posts when due, until ctx ends.
func (s *statusLoop) run(ctx context.Context) {
	a := s.a
	next := a.o.StatusFrequency
	for a.sleep(ctx, next) {
		obs := a.observe(ctx)
		now := a.o.Clock.Now()
		changed := nodeChanged(s.last, applyNode(s.last, obs, now))
		if !s.report.due(now, changed) {
			next = a.o.StatusFrequency
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, a.callTimeout())
		n, err := s.post(cctx, obs)
		cancel()
		if errors.Is(err, errNodeGone) {
			a.o.Logger.Warn("the node was deleted from the API server; registering it again", "node", a.o.NodeName)
			if err := s.register(ctx); err != nil {
				return
			}
			next = a.o.StatusFrequency
			continue
		}
		next = s.a.result(ctx, &s.hb, heartbeatStatus, err).next
		if err == nil {
			s.wrote(n, changed)
		}
	}
}

// wrote records a Node the API server accepted, and the events of its
// condition transitions.
func (s *statusLoop) wrote(n *v1.Node, changed bool) {
	s.a.recordTransitions(s.prior, n.Status.Conditions)
	s.last = n
	s.a.setNode(n)
	s.report.posted(s.a.o.Clock.Now(), changed)
	s.a.metrics.statusPosts.Inc()
	if s.a.o.VolumesReported != nil {
		s.a.o.VolumesReported(n.Status.VolumesInUse)
	}
}

// post reads the Node, sets what the agent owns and patches its status,
// re-reading when the Node changed in between.
func (s *statusLoop) post(ctx context.Context, obs observed) (*v1.Node, error) {
	a := s.a
	nodes := a.o.Client.CoreV1().Nodes()
	var err error
	for range maxPostTries {
		var cur *v1.Node
		cur, err = nodes.Get(ctx, a.o.NodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, errNodeGone
		}
		if err != nil {
			return nil, fmt.Errorf("reading node %s: %w", a.o.NodeName, err)
		}
		var n *v1.Node
		n, err = s.patch(ctx, cur, obs)
		if apierrors.IsNotFound(err) {
			return nil, errNodeGone
		}
		if err == nil {
			s.prior = cur.Status.Conditions
		}
		if !apierrors.IsConflict(err) {
			return n, err
		}
		a.o.Logger.Debug("the node changed while its status was written; reading it again", "node", a.o.NodeName)
	}
	return nil, err
}

// patch writes obs over cur, as read from the API server.
func (s *statusLoop) patch(ctx context.Context, cur *v1.Node, obs observed) (*v1.Node, error) {
	a := s.a
	p, err := statusPatch(cur, applyNode(cur, obs, a.o.Clock.Now()))
	if err != nil {
		return nil, err
	}
	n, err := a.o.Client.CoreV1().Nodes().Patch(ctx, a.o.NodeName, types.StrategicMergePatchType, p, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("patching the status of node %s: %w", a.o.NodeName, err)
	}
	return n, nil
}
