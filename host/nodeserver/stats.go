package nodeserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Stats is the node's kept numbers (host/nodestats); serving them never
// asks the runtime.
type Stats interface {
	// Summary is the kubelet's Summary API of the last reading; an error
	// when there is none yet or the runtime's part failed (the summary
	// then holds what was read).
	Summary() (statsapi.Summary, error)
	// ResourceMetrics serves the kubelet's /metrics/resource.
	ResourceMetrics() http.Handler
}

// PodsFunc lists the pods the node runs, with their status.
type PodsFunc func(ctx context.Context) ([]v1.Pod, error)

// handleStats registers /stats/summary and /metrics/resource when the
// node has stats, /pods when it lists pods, /metrics when it has metrics,
// and /healthz.
func (s *Server) handleStats(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	if s.opts.Stats != nil {
		mux.HandleFunc("GET /stats/summary", s.summary)
		mux.Handle("GET /metrics/resource", s.opts.Stats.ResourceMetrics())
	}
	if s.opts.Pods != nil {
		mux.HandleFunc("GET /pods", s.pods)
	}
	if s.opts.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.opts.Metrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	}
}

func (s *Server) summary(w http.ResponseWriter, r *http.Request) {
	only := false
	if v := r.URL.Query().Get("only_cpu_and_memory"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			http.Error(w, "query parameter \"only_cpu_and_memory\": "+strconv.Quote(v)+" is not a boolean", http.StatusBadRequest)
			return
		}
		only = b
	}
	sum, err := s.opts.Stats.Summary()
	if err != nil && sum.Node.NodeName == "" {
		http.Error(w, "stats: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		s.opts.Logger.Debug("serving a partial summary", "err", err)
	}
	if only {
		sum = cpuAndMemory(sum)
	}
	writeJSON(w, sum)
}

// cpuAndMemory keeps what the kubelet keeps for only_cpu_and_memory.
func cpuAndMemory(s statsapi.Summary) statsapi.Summary {
	out := statsapi.Summary{Node: statsapi.NodeStats{NodeName: s.Node.NodeName, StartTime: s.Node.StartTime,
		CPU: s.Node.CPU, Memory: s.Node.Memory}, Pods: make([]statsapi.PodStats, 0, len(s.Pods))}
	for _, p := range s.Pods {
		q := statsapi.PodStats{PodRef: p.PodRef, StartTime: p.StartTime, CPU: p.CPU, Memory: p.Memory,
			Containers: make([]statsapi.ContainerStats, 0, len(p.Containers))}
		for _, c := range p.Containers {
			q.Containers = append(q.Containers, statsapi.ContainerStats{Name: c.Name, StartTime: c.StartTime, CPU: c.CPU, Memory: c.Memory})
		}
		out.Pods = append(out.Pods, q)
	}
	return out
}

func (s *Server) pods(w http.ResponseWriter, r *http.Request) {
	pods, err := s.opts.Pods(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	list := v1.PodList{Items: pods}
	list.APIVersion, list.Kind = "v1", "PodList"
	writeJSON(w, list)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
