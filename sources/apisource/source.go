package apisource

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/manifest"
)

// maxRequestErrors bounds the failed requests a source remembers.
const maxRequestErrors = 100

// Options configure a Source.
type Options struct {
	// Persister stores the pods; required.
	Persister Persister
	// NodeName, when set, becomes spec.nodeName of pods that name none.
	NodeName string
	// NewUID gives a created pod its UID; random UUIDs when nil.
	NewUID func() types.UID
	// Now stamps creation, deletion and config.seen; time.Now when nil.
	Now func() time.Time
}

// Op says what Apply did.
type Op string

// The outcomes of Apply.
const (
	Created   Op = "created"
	Updated   Op = "updated"
	Unchanged Op = "unchanged"
)

// DeleteOptions refine a Delete.
type DeleteOptions struct {
	// GracePeriod in seconds; the pod's terminationGracePeriodSeconds when
	// nil. Zero without Force is taken as 1 s, so a graceful delete always
	// lets the containers see SIGTERM.
	GracePeriod *int64
	// Force removes the pod from the desired set at once, with grace 0.
	Force bool
}

// Source is the api source. Its methods are safe for concurrent use.
type Source struct {
	opts    Options
	updates chan sources.Snapshot
	synced  chan struct{}

	// keys serialises the changes to one pod; s.mu is not held while a
	// change is written to the Persister.
	keys keyLocks

	mu     sync.Mutex
	loaded bool
	pods   map[string]*v1.Pod
	// configMaps and secrets are by namespace/name (objects.go).
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	// failed holds the last failed request per pod key, oldest first.
	failed []*InvalidError
}

// New returns a source; call Load before anything else.
func New(opts Options) *Source {
	if opts.NewUID == nil {
		opts.NewUID = randomUID
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Source{
		opts:    opts,
		updates: make(chan sources.Snapshot, 1),
		synced:  make(chan struct{}),
		pods:    map[string]*v1.Pod{},

		configMaps: map[string]*v1.ConfigMap{},
		secrets:    map[string]*v1.Secret{},
	}
}

// Updates delivers a complete snapshot after every change. It holds only
// the newest: an unread snapshot is replaced by a newer one.
func (s *Source) Updates() <-chan sources.Snapshot { return s.updates }

// Synced is closed when Load puts the first snapshot on Updates: whoever
// received a snapshot finds it closed.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// Load reads the persisted pods and sends the first snapshot. A second call
// does nothing.
func (s *Source) Load(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return nil
	}
	pods, err := s.opts.Persister.Load(ctx)
	if err != nil {
		return fmt.Errorf("loading api pods: %w", err)
	}
	for _, p := range pods {
		s.pods[key(p.Namespace, p.Name)] = p.DeepCopy()
	}
	objs, err := s.opts.Persister.LoadObjects(ctx)
	if err != nil {
		return fmt.Errorf("loading api ConfigMaps and Secrets: %w", err)
	}
	for _, o := range objs {
		s.storeObjectLocked(o)
	}
	s.loaded = true
	close(s.synced) // before the snapshot: whoever received it finds Synced closed
	s.publishLocked()
	return nil
}

// Apply creates or updates the pod in body (JSON or YAML). where names the
// request in errors and snapshots. An update keeps the UID and creation
// time; applying what is already stored changes nothing.
func (s *Source) Apply(ctx context.Context, where string, body []byte) (*v1.Pod, Op, error) {
	now := s.opts.Now()
	pod, err := decodePod(where, body, now)
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.loaded {
			return nil, "", ErrNotLoaded
		}
		s.rememberLocked(err.(*InvalidError))
		s.publishLocked()
		return nil, "", err
	}
	k := key(pod.Namespace, pod.Name)
	defer s.keys.lock(k)()
	s.mu.Lock()
	if !s.loaded {
		s.mu.Unlock()
		return nil, "", ErrNotLoaded
	}
	old, exists := s.pods[k]
	s.mu.Unlock()
	if exists && old.DeletionTimestamp != nil {
		return nil, "", fmt.Errorf("applying pod %s: %w", k, ErrTerminating)
	}
	if pod.Spec.NodeName == "" {
		pod.Spec.NodeName = s.opts.NodeName
	}
	// What the API owns is never taken from the body.
	pod.Status = v1.PodStatus{}
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = nil, nil
	pod.ResourceVersion, pod.ManagedFields = "", nil
	op := Updated
	if exists {
		pod.UID, pod.CreationTimestamp, pod.Generation = old.UID, old.CreationTimestamp, old.Generation
	} else {
		op = Created
		s.mu.Lock() // NewUID need not be safe for concurrent use
		pod.UID = s.opts.NewUID()
		s.mu.Unlock()
		pod.CreationTimestamp, pod.Generation = metav1.NewTime(now), 1
	}
	pod.Annotations[manifest.AnnotationSource] = sources.SourceAPI
	pod.Annotations[manifest.AnnotationHash] = string(pod.UID)
	if exists && sameContent(old, pod) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.forgetLocked(k)
		s.publishLocked()
		return old.DeepCopy(), Unchanged, nil
	}
	if exists {
		pod.Generation++
	}
	if err := s.commit(ctx, k, pod); err != nil {
		return nil, "", fmt.Errorf("saving pod %s: %w", k, err)
	}
	return pod.DeepCopy(), op, nil
}

// commit writes pod (nil removes it) to the Persister and, once it is
// durable, into the desired set, and publishes. The caller holds k's key
// lock and not s.mu, so that concurrent changes to other pods share the
// Persister's commits.
func (s *Source) commit(ctx context.Context, k string, pod *v1.Pod) error {
	namespace, name, _ := strings.Cut(k, "/")
	if err := s.opts.Persister.Write(ctx, Change{Namespace: namespace, Name: name, Pod: pod}); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pod == nil {
		delete(s.pods, k)
	} else {
		s.pods[k] = pod
	}
	s.forgetLocked(k)
	s.publishLocked()
	return nil
}

// sameContent compares two pods ignoring the config.seen annotation.
func sameContent(a, b *v1.Pod) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Annotations, manifest.AnnotationSeen)
	delete(b.Annotations, manifest.AnnotationSeen)
	return equality.Semantic.DeepEqual(a, b)
}

// Delete marks the pod for deletion, or with Force removes it from the
// desired set. It returns the pod as it now stands.
func (s *Source) Delete(ctx context.Context, namespace, name string, opts DeleteOptions) (*v1.Pod, error) {
	k := key(namespace, name)
	if g := opts.GracePeriod; g != nil && *g < 0 {
		return nil, &InvalidError{Where: "delete", Namespace: namespace, Name: name,
			Errs: []error{field.Invalid(field.NewPath("gracePeriodSeconds"), *g, "must be >= 0")}}
	}
	defer s.keys.lock(k)()
	s.mu.Lock()
	loaded := s.loaded
	old, ok := s.pods[k]
	s.mu.Unlock()
	if !loaded {
		return nil, ErrNotLoaded
	}
	if !ok {
		return nil, fmt.Errorf("deleting pod %s: %w", k, ErrNotFound)
	}
	pod := old.DeepCopy()
	grace := gracePeriod(pod, opts)
	if old.DeletionGracePeriodSeconds != nil && *old.DeletionGracePeriodSeconds < grace {
		grace = *old.DeletionGracePeriodSeconds // a delete may shorten the grace, never lengthen it
	}
	if pod.DeletionTimestamp == nil {
		ts := metav1.NewTime(s.opts.Now())
		pod.DeletionTimestamp = &ts
	}
	pod.DeletionGracePeriodSeconds = &grace

	stored := pod
	if opts.Force {
		stored = nil
	}
	if err := s.commit(ctx, k, stored); err != nil {
		return nil, fmt.Errorf("deleting pod %s: saving: %w", k, err)
	}
	return pod.DeepCopy(), nil
}

func gracePeriod(pod *v1.Pod, opts DeleteOptions) int64 {
	switch {
	case opts.Force:
		return 0
	case opts.GracePeriod != nil && *opts.GracePeriod == 0:
		return 1
	case opts.GracePeriod != nil:
		return *opts.GracePeriod
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	// Decoding (manifest.Decode) gives every spec the API's default.
	return v1.DefaultTerminationGracePeriodSeconds
}

// Remove drops a pod marked for deletion once it has finished; the host
// calls it from its status sink's Delete. A pod that is gone already is
// no error; one stored under another UID is.
func (s *Source) Remove(ctx context.Context, namespace, name string, uid types.UID) error {
	k := key(namespace, name)
	defer s.keys.lock(k)()
	s.mu.Lock()
	loaded := s.loaded
	old, ok := s.pods[k]
	s.mu.Unlock()
	if !loaded {
		return ErrNotLoaded
	}
	if !ok {
		return nil
	}
	if old.UID != uid {
		return fmt.Errorf("removing pod %s uid %s: %w (%s)", k, uid, ErrUIDMismatch, old.UID)
	}
	if err := s.commit(ctx, k, nil); err != nil {
		return fmt.Errorf("removing pod %s: saving: %w", k, err)
	}
	return nil
}

// Get returns a copy of the stored pod.
func (s *Source) Get(namespace, name string) (*v1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[key(namespace, name)]
	if !ok {
		return nil, false
	}
	return p.DeepCopy(), true
}

// Has tells whether the source still holds the pod under namespace/name
// with this UID, without copying it.
func (s *Source) Has(namespace, name string, uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[key(namespace, name)]
	return ok && p.UID == uid
}

// List returns copies of the stored pods sorted by namespace/name.
func (s *Source) List() []*v1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	return deepCopies(sortedPods(s.pods))
}

// rememberLocked records a failed request, replacing an older one for the
// same pod and dropping the oldest beyond maxRequestErrors.
func (s *Source) rememberLocked(e *InvalidError) {
	if e.Name != "" {
		s.forgetLocked(key(e.Namespace, e.Name))
	}
	s.failed = append(s.failed, e)
	if len(s.failed) > maxRequestErrors {
		s.failed = s.failed[len(s.failed)-maxRequestErrors:]
	}
}

func (s *Source) forgetLocked(k string) {
	kept := s.failed[:0]
	for _, e := range s.failed {
		if e.Name == "" || key(e.Namespace, e.Name) != k {
			kept = append(kept, e)
		}
	}
	s.failed = kept
}

// publishLocked replaces the unread snapshot, if any, with the present.
func (s *Source) publishLocked() {
	snap := sources.Snapshot{Source: sources.SourceAPI}
	for _, p := range sortedPods(s.pods) {
		k := key(p.Namespace, p.Name)
		snap.Pods = append(snap.Pods, sources.Pod{Pod: p.DeepCopy(), Origin: sources.Origin{
			Source: sources.SourceAPI, Key: k, Where: "api pod " + k}})
	}
	s.publishObjectsLocked(&snap)
	for _, e := range s.failed {
		snap.Errors = append(snap.Errors, e)
	}
	select {
	case <-s.updates:
	default:
	}
	s.updates <- snap // never blocks: every sender holds s.mu
}

func sortedPods(m map[string]*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		return key(out[i].Namespace, out[i].Name) < key(out[j].Namespace, out[j].Name)
	})
	return out
}

func key(namespace, name string) string { return namespace + "/" + name }

// randomUID returns a random (version 4) UUID.
func randomUID() types.UID {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	s := hex.EncodeToString(b[:])
	return types.UID(s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32])
}
