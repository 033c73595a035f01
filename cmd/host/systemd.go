package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
)

// systemdStatusInterval is how often the line `systemctl status` shows is
// refreshed when the unit sets no watchdog.
const systemdStatusInterval = 10 * time.Second

// systemdStatus is the line `systemctl status podhost` shows: how many pods
// run, and why the host is not ready when it is not. It reads the pods
// through the node, so that it is also the watchdog's test of life.
func systemdStatus(views localapi.Views) func(context.Context) string {
	return func(ctx context.Context) string {
		items, err := views.Pods.List(ctx)
		if err != nil {
			return "listing pods: " + err.Error()
		}
		var running, pending, finished int
		for _, it := range items {
			switch it.Pod.Status.Phase {
			case v1.PodRunning:
				running++
			case v1.PodSucceeded, v1.PodFailed:
				finished++
			default:
				pending++
			}
		}
		line := fmt.Sprintf("%s running, %d pending, %d finished", pods(running), pending, finished)
		if ready, why := views.Ready(); !ready {
			line += "; not ready: " + why
		}
		return line
	}
}

// pods is "1 pod" or "n pods".
func pods(n int) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}
