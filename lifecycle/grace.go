package lifecycle

import v1 "k8s.io/api/core/v1"

// minGracePeriod is the smallest grace period ever used, in seconds.
const minGracePeriod = 1

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
