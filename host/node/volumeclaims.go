package node

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/sources"
)

// Where a pod's claims resolve: a pod of the API server resolves them in
// the API server (apiClaims); every other pod, a static pod in Kubernetes
// mode included, against the PersistentVolumes and claims of the manifest
// directory and the local API (staticClaims). A static pod must run while
// the API server is away, and the Node authorizer lets the node read only
// the claims of pods the API server binds to it, which a static pod is not.
type podClaims struct {
	static *staticClaims
	api    *apiClaims // nil outside Kubernetes mode
	origin func(types.UID) (sources.Origin, bool)
}

func (c podClaims) PersistentVolume(ctx context.Context, pod *v1.Pod, claim string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error) {
	if c.api != nil && c.origin != nil {
		if o, ok := c.origin(pod.UID); ok && o.Source == sources.SourceAPIServer {
			return c.api.PersistentVolume(ctx, pod, claim)
		}
	}
	return c.static.PersistentVolume(ctx, pod, claim)
}

// staticClaims resolves a pod's claims against the PersistentVolumes and
// PersistentVolumeClaims the sources define. A claim is bound by its
// spec.volumeName.
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
func (c *staticClaims) PersistentVolume(_ context.Context, pod *v1.Pod, claim string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cl, ok := c.claims[pod.Namespace+"/"+claim]
	if !ok {
		return nil, nil, fmt.Errorf("no PersistentVolumeClaim %s/%s in the sources", pod.Namespace, claim)
	}
	if cl.Spec.VolumeName == "" {
		return cl, nil, nil
	}
	return cl, c.volumes[cl.Spec.VolumeName], nil
}

// claimTimeout bounds one read of a claim or a volume.
const claimTimeout = 10 * time.Second

// apiClaims reads a claim and its volume from the API server with the
// node's credentials. The Node authorizer grants a node get (not list or
// watch) on the claims of the pods bound to it and on the volumes those
// claims are bound to, so each resolution is two GETs; the volume manager
// resolves a pod's volumes once per sync, not in its reconcile loop.
type apiClaims struct{ client kubernetes.Interface }

// PersistentVolume returns the claim and its volume. A claim without
// spec.volumeName, or not in phase Bound, is not bound yet
// (ErrClaimNotBound): the claim is asked again on the pod's next sync.
func (c *apiClaims) PersistentVolume(ctx context.Context, pod *v1.Pod, claim string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error) {
	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	cl, err := c.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, claim, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("no PersistentVolumeClaim %s/%s in the API server", pod.Namespace, claim)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading PersistentVolumeClaim %s/%s: %w", pod.Namespace, claim, err)
	}
	if cl.Spec.VolumeName == "" || cl.Status.Phase != v1.ClaimBound {
		return nil, nil, fmt.Errorf("PersistentVolumeClaim %s/%s (phase %q, volumeName %q) %w",
			pod.Namespace, claim, cl.Status.Phase, cl.Spec.VolumeName, volumemanager.ErrClaimNotBound)
	}
	pv, err := c.client.CoreV1().PersistentVolumes().Get(ctx, cl.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading PersistentVolume %s of claim %s/%s: %w", cl.Spec.VolumeName, pod.Namespace, claim, err)
	}
	if ref := pv.Spec.ClaimRef; ref != nil && (ref.Namespace != cl.Namespace || ref.Name != cl.Name || (ref.UID != "" && ref.UID != cl.UID)) {
		return nil, nil, fmt.Errorf("PersistentVolume %s is bound to claim %s/%s, not to %s/%s: claim %w",
			pv.Name, ref.Namespace, ref.Name, cl.Namespace, cl.Name, volumemanager.ErrClaimNotBound)
	}
	return cl, pv, nil
}

// csiDriver reads a CSI driver's CSIDriver object in Kubernetes mode, as
// the kubelet does; nil without one. Outside Kubernetes mode there are no
// CSIDriver objects: get is nil.
func (n *Node) csiDriver() (get func(ctx context.Context, driver string) (*storagev1.CSIDriverSpec, error)) {
	if !n.cfg.Kubernetes.enabled() {
		return nil
	}
	client := n.cfg.Kubernetes.Client
	return func(ctx context.Context, driver string) (*storagev1.CSIDriverSpec, error) {
		ctx, cancel := context.WithTimeout(ctx, claimTimeout)
		defer cancel()
		d, err := client.StorageV1().CSIDrivers().Get(ctx, driver, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading CSIDriver %s: %w", driver, err)
		}
		return &d.Spec, nil
	}
}

// csiFSGroupPolicy is a CSI driver's fsGroupPolicy from its CSIDriver
// object; a driver without one (or without a policy) has the default.
// Outside Kubernetes mode: nil, the default for every driver.
func (n *Node) csiFSGroupPolicy() func(ctx context.Context, driver string) (storagev1.FSGroupPolicy, error) {
	get := n.csiDriver()
	if get == nil {
		return nil
	}
	return func(ctx context.Context, driver string) (storagev1.FSGroupPolicy, error) {
		d, err := get(ctx, driver)
		if err != nil {
			return "", err
		}
		if d == nil || d.FSGroupPolicy == nil {
			return storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, nil
		}
		return *d.FSGroupPolicy, nil
	}
}

// csiPodInfoOnMount is a CSI driver's podInfoOnMount from its CSIDriver
// object (false without one). Outside Kubernetes mode: nil.
func (n *Node) csiPodInfoOnMount() func(ctx context.Context, driver string) (bool, error) {
	get := n.csiDriver()
	if get == nil {
		return nil
	}
	return func(ctx context.Context, driver string) (bool, error) {
		d, err := get(ctx, driver)
		if err != nil || d == nil {
			return false, err
		}
		return d.PodInfoOnMount != nil && *d.PodInfoOnMount, nil
	}
}
