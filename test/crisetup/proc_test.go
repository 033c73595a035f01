package crisetup

import (
	"slices"
	"testing"
)

func TestLeftovers(t *testing.T) {
	const sock = "/tmp/x/containerd.sock"
	shim := func(pid, ppid int, socket string) process {
		return process{pid: pid, ppid: ppid, argv: []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", socket}}
	}
	other := func(pid, ppid int) process { return process{pid: pid, ppid: ppid, argv: []string{"sleep", "3600"}} }
	tests := []struct {
		name                string
		procs               []process
		busy, idle, victims []int
	}{
		{name: "none", procs: []process{other(5, 1)}},
		{name: "a shim running a pod", procs: []process{shim(10, 1, sock), other(11, 10), other(12, 11)}, busy: []int{10}, victims: []int{12, 11, 10}},
		{name: "an idle shim", procs: []process{shim(20, 1, sock)}, idle: []int{20}, victims: []int{20}},
		{name: "another instance's shim", procs: []process{shim(30, 1, "/tmp/y/containerd.sock"), other(31, 30)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy, idle, victims := leftovers(tt.procs, sock)
			if !slices.Equal(busy, tt.busy) || !slices.Equal(idle, tt.idle) || !slices.Equal(victims, tt.victims) {
				t.Errorf("leftovers = busy %v idle %v victims %v; want %v %v %v", busy, idle, victims, tt.busy, tt.idle, tt.victims)
			}
		})
	}
}
