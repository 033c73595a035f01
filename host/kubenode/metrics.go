package kubenode

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics' names.
const (
	HeartbeatFailuresMetric = "podhost_kubenode_heartbeat_failures_total"
	StatusPostsMetric       = "podhost_kubenode_status_posts_total"
	LeaseRenewalsMetric     = "podhost_kubenode_lease_renewals_total"
)

// The heartbeat label's values.
const (
	heartbeatLease    = "lease"
	heartbeatStatus   = "status"
	heartbeatRegister = "register"
)

type metrics struct {
	failures      *prometheus.CounterVec
	statusPosts   prometheus.Counter
	leaseRenewals prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	m := metrics{
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: HeartbeatFailuresMetric,
			Help: "Failed writes to the API server of the node's registration, status or Lease."}, []string{"heartbeat"}),
		statusPosts: prometheus.NewCounter(prometheus.CounterOpts{Name: StatusPostsMetric,
			Help: "Node status patches the API server accepted."}),
		leaseRenewals: prometheus.NewCounter(prometheus.CounterOpts{Name: LeaseRenewalsMetric,
			Help: "Node Lease renewals (and creations) the API server accepted."}),
	}
	for _, h := range []string{heartbeatLease, heartbeatStatus, heartbeatRegister} {
		m.failures.WithLabelValues(h)
	}
	for _, c := range []prometheus.Collector{m.failures, m.statusPosts, m.leaseRenewals} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return m, fmt.Errorf("kubenode options: Registry: the node metrics are registered already: %w", err)
			}
			return m, fmt.Errorf("kubenode options: Registry: %w", err)
		}
	}
	return m, nil
}
