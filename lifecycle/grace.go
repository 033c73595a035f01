package lifecycle

import v1 "k8s.io/api/core/v1"

// minGracePeriod is the smallest grace period ever used, in seconds.
const minGracePeriod = 1

// GracePeriod is a kill's grace period in seconds: override when set, else
// the pod spec's, else the API's default (30). It is the one place of that
// default on the node's side; sources/manifest writes it into the specs it
// decodes, as the API server does.
func GracePeriod(pod *v1.Pod, override *int64) int64 {
	switch {
	case override != nil:
		return *override
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return v1.DefaultTerminationGracePeriodSeconds
}

// effectiveGracePeriod computes the grace period of a terminating pod from
// the current value (0 = unset), the API deletion grace period, a kill
// override and the spec. The result never grows and is at least 1. shortened
// reports that a previously set value decreased.
func effectiveGracePeriod(current int64, pod *v1.Pod, override *int64) (grace int64, shortened bool) {
	grace = current
	applied := false
	if pod != nil && pod.DeletionGracePeriodSeconds != nil {
		if d := *pod.DeletionGracePeriodSeconds; grace == 0 || d < grace {
			grace, applied = d, true
		}
	}
	if override != nil {
		if o := *override; grace == 0 || o < grace {
			grace, applied = o, true
		}
	}
	if !applied && grace == 0 && pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if grace < minGracePeriod {
		grace = minGracePeriod
	}
	return grace, current != 0 && current != grace
}
