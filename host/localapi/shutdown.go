package localapi

import (
	"context"
	"net/http"
	"time"
)

// ShutdownFunc shuts the node down: it stops every pod within the host's
// shutdown grace period, without counting the stop as the pods' failure,
// and returns once they are stopped. It is the view behind
// POST /v1/node/shutdown.
type ShutdownFunc func(ctx context.Context) (ShutdownResult, error)

// ShutdownResult is the answer to POST /v1/node/shutdown.
type ShutdownResult struct {
	// BootID is the kernel's boot ID the shutdown was recorded under.
	BootID string `json:"bootID"`
	// GracePeriodSeconds is the node's budget (config shutdownGracePeriod).
	GracePeriodSeconds int64     `json:"gracePeriodSeconds"`
	Started            time.Time `json:"started"`
	Finished           time.Time `json:"finished"`
	// Pods are the pods the shutdown stopped; pods that had already
	// finished are not stopped again and not listed.
	Pods []ShutdownPod `json:"pods"`
}

// ShutdownPod is one pod a node shutdown stopped.
type ShutdownPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// GracePeriodSeconds is what the pod got: its own, capped by the node's.
	GracePeriodSeconds int64 `json:"gracePeriodSeconds"`
	// Phase is the phase the pod keeps: the shutdown never makes it Failed.
	// It is empty for a pod that was already being deleted: that one
	// finishes as a deleted pod.
	Phase string `json:"phase"`
	// Error says why the pod may not have stopped in time; empty if it did.
	Error string `json:"error,omitempty"`
}

func (h *handler) shutdown(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Shutdown != nil, "POST /v1/node/shutdown") {
		return
	}
	res, err := h.v.Shutdown(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
