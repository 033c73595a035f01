package main

import (
	"testing"
)

func TestListedSandboxIPComesFromTheStatusAlreadyRead(t *testing.T) {
	tests := []struct {
		name       string
		status     bool // SandboxStatus first, as the host does after RunSandbox
		wantStatus int  // PodSandboxStatus calls in all
	}{
		{"listed first", false, 1},
		{"status first", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cri := newFakeCRI()
			r := newCRIRuntime(testLogger())
			r.current.Store(&backend{cfg: defaultConfig(), rt: cri})
			if tt.status {
				if sb, err := r.SandboxStatus(t.Context(), "s1"); err != nil || sb.IP != "10.0.0.5" {
					t.Fatalf("SandboxStatus: got %+v, %v", sb, err)
				}
			}
			list, err := r.ListSandboxes(t.Context(), SandboxFilter{})
			if err != nil || len(list) != 1 || list[0].IP != "10.0.0.5" {
				t.Fatalf("ListSandboxes: got %+v, %v; want s1 with 10.0.0.5", list, err)
			}
			cri.mu.Lock()
			defer cri.mu.Unlock()
			if n := cri.calls["PodSandboxStatus"]; n != tt.wantStatus {
				t.Errorf("%d PodSandboxStatus calls; want %d", n, tt.wantStatus)
			}
		})
	}
}
