package main

import (
	"context"
	"sync"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxSandboxIPs bounds the IP cache; past it the cache starts over.
const maxSandboxIPs = 4096

// sandboxIPs remembers the pod IP of each ready sandbox ("" on the host
// network). CRI's ListPodSandbox carries no IP but the contract's
// ListSandboxes does; a sandbox's IP never changes while it is ready, so
// one PodSandboxStatus per sandbox gives it: the host's own SandboxStatus
// call, or the first listing's.
type sandboxIPs struct {
	mu sync.Mutex
	m  map[string]string
}

// fill sets the IP of every ready sandbox of list, asking PodSandboxStatus
// for those not known yet. A sandbox whose status cannot be read is listed
// without IP, and asked again next time.
func (c *sandboxIPs) fill(ctx context.Context, rt criapi.RuntimeServiceClient, list []Sandbox) {
	for i := range list {
		sb := &list[i]
		if sb.State != SandboxReady {
			continue
		}
		c.mu.Lock()
		ip, ok := c.m[sb.ID]
		c.mu.Unlock()
		if !ok {
			resp, err := rt.PodSandboxStatus(ctx, &criapi.PodSandboxStatusRequest{PodSandboxId: sb.ID})
			if err != nil || resp.GetStatus().GetState() != criapi.PodSandboxState_SANDBOX_READY {
				continue
			}
			ip = resp.GetStatus().GetNetwork().GetIp()
			c.remember(sb.ID, ip)
		}
		sb.IP = ip
	}
}

// remember records the IP of the ready sandbox id.
func (c *sandboxIPs) remember(id, ip string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSandboxIPs {
		c.m = map[string]string{}
	}
	c.m[id] = ip
}
