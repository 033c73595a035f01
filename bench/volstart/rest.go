package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/podhost/podhost/bench/internal/hostproc"
)

// restResult is the rest phase without and with the volumes.
type restResult struct {
	without, with hostproc.Usage
}

// procOrder is the order of the processes in the table.
var procOrder = []string{"host", "volume-csi", "runtime-containerd", "csi-loopdriver"}

// measureRest runs the pods without volumes, measures, deletes them; then
// runs them with the volumes, measures, deletes them and waits until every
// volume is unstaged.
func measureRest(ctx context.Context, o options, h *host, w *watcher, d *driver) (*restResult, error) {
	pids := map[string]int{"host": h.PID(), "volume-csi": h.csiPID, "runtime-containerd": h.PluginPID(), "csi-loopdriver": d.pid()}
	var r restResult
	for _, withVolumes := range []bool{false, true} {
		pods := map[string][]byte{}
		claims := make([][]string, o.restPods)
		var volumes []string
		if withVolumes {
			for i := range o.restVolumes {
				c := fmt.Sprintf("rest-%d", i)
				claims[i%o.restPods] = append(claims[i%o.restPods], c)
				volumes = append(volumes, c)
			}
		}
		var names []string
		for i := range o.restPods {
			name := fmt.Sprintf("idle-%d", i)
			if withVolumes {
				name = fmt.Sprintf("held-%d", i)
			}
			pods[name] = pod(name, claims[i]...)
			names = append(names, name)
		}
		if _, err := runPods(ctx, o, h, w, pods); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "volstart: %d pods running (%d volumes); %s to settle, then %s of CPU\n", len(pods), len(volumes), o.settle, o.window)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.settle):
		}
		var profiled chan error
		if withVolumes && o.profile != "" {
			profiled = make(chan error, 1)
			wait := h.ProfileCPU(ctx, "volstart", o.profile, o.window)
			go func() { profiled <- wait() }()
		}
		u, err := hostproc.Measure(ctx, o.window, pids)
		if err != nil {
			return nil, err
		}
		if profiled != nil {
			if err := <-profiled; err != nil {
				return nil, fmt.Errorf("profile: %w", err)
			}
		}
		if withVolumes {
			r.with = u
		} else {
			r.without = u
		}
		if err := deletePods(ctx, o, h, w, names); err != nil {
			return nil, err
		}
		if err := waitDetached(ctx, o, d, volumes...); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

func (r *restResult) table(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "At rest, %d pods, CPU over %s (%% of one core) and RSS:\n\n", o.restPods, o.window)
	fmt.Fprintf(&b, "| process | no volumes: CPU | %d volumes: CPU | added | no volumes: RSS | %d volumes: RSS |\n|---|---|---|---|---|---|\n", o.restVolumes, o.restVolumes)
	for _, p := range procOrder {
		fmt.Fprintf(&b, "| %s | %.2f %% | %.2f %% | %+.2f %% | %.1f MiB | %.1f MiB |\n", p,
			r.without.CPU[p], r.with.CPU[p], r.with.CPU[p]-r.without.CPU[p], r.without.RSS[p], r.with.RSS[p])
	}
	added := r.with.CPU["host"] + r.with.CPU["volume-csi"] - r.without.CPU["host"] - r.without.CPU["volume-csi"]
	fmt.Fprintf(&b, "\nHost + volume-csi with %d volumes mounted add %.2f %% of one core: goal under 1 %%: %s.\n", o.restVolumes, added, verdict(added < 1))
	return b.String()
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "not met"
}
