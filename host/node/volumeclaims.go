package node

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/sources"
)

// staticClaims resolves a pod's claims against the PersistentVolumes and
// PersistentVolumeClaims the sources define (the volume manager's
// Resolver in standalone mode). A claim is bound by its spec.volumeName.
type staticClaims struct {
	mu      sync.RWMutex
	volumes map[string]*v1.PersistentVolume
	claims  map[string]*v1.PersistentVolumeClaim // namespace/name
}

// set takes the volumes and claims of a merged desired state.
func (c *staticClaims) set(d sources.Desired) {
	vols := make(map[string]*v1.PersistentVolume, len(d.Volumes))
	for _, v := range d.Volumes {
		vols[v.Volume.Name] = v.Volume
	}
	claims := make(map[string]*v1.PersistentVolumeClaim, len(d.Claims))
	for _, cl := range d.Claims {
		claims[cl.Claim.Namespace+"/"+cl.Claim.Name] = cl.Claim
	}
	c.mu.Lock()
	c.volumes, c.claims = vols, claims
	c.mu.Unlock()
}

// PersistentVolume returns the claim and the volume it names; a claim
// that names none, or one not defined, is not bound (nil volume).
func (c *staticClaims) PersistentVolume(_ context.Context, namespace, claim string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cl, ok := c.claims[namespace+"/"+claim]
	if !ok {
		return nil, nil, fmt.Errorf("no PersistentVolumeClaim %s/%s in the sources", namespace, claim)
	}
	if cl.Spec.VolumeName == "" {
		return cl, nil, nil
	}
	return cl, c.volumes[cl.Spec.VolumeName], nil
}
