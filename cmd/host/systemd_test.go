package main

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
)

// listedPods is a pod API that only lists.
type listedPods struct {
	localapi.Pods
	phases []v1.PodPhase
	err    error
}

func (p listedPods) List(context.Context) ([]localapi.PodItem, error) {
	var items []localapi.PodItem
	for _, ph := range p.phases {
		items = append(items, localapi.PodItem{Pod: &v1.Pod{Status: v1.PodStatus{Phase: ph}}})
	}
	return items, p.err
}

func TestSystemdStatus(t *testing.T) {
	tests := []struct {
		name   string
		pods   listedPods
		ready  bool
		reason string
		want   string
	}{
		{"no pods", listedPods{}, true, "", "0 pods running, 0 pending, 0 finished"},
		{"mixed", listedPods{phases: []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodPending, "", v1.PodSucceeded, v1.PodFailed}}, true, "",
			"2 pods running, 2 pending, 2 finished"},
		{"not ready", listedPods{phases: []v1.PodPhase{v1.PodRunning}}, false, "pod sources not synced yet",
			"1 pod running, 0 pending, 0 finished; not ready: pod sources not synced yet"},
		{"list fails", listedPods{err: errors.New("node stopped")}, true, "", "listing pods: node stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			views := localapi.Views{Pods: tt.pods, Ready: func() (bool, string) { return tt.ready, tt.reason }}
			if got := systemdStatus(views)(context.Background()); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}
