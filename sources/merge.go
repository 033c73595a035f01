package sources

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podhost/podhost/sources/podvalidate"
)

// Desired is the merged desired set.
type Desired struct {
	// Pods are the pods to run, sorted by namespace/name.
	Pods []Pod
	// Volumes and Claims are the statically defined PersistentVolumes and
	// PersistentVolumeClaims, sorted by name.
	Volumes []Volume
	Claims  []Claim
	// ConfigMaps and Secrets are the sources' objects, sorted by
	// namespace/name.
	ConfigMaps []ConfigMap
	Secrets    []Secret
	// Rejected are pods that decoded but must not run, each with the reason:
	// a [*ConflictError] or a validation error naming the field.
	Rejected []Rejected
	// Errors are the sources' errors, then conflicts of volumes and claims.
	Errors []error
	// Synced is true once every expected source has reported.
	Synced bool
}

// Rejected is a pod that must not run, and why.
type Rejected struct {
	Pod Pod
	Err error
}

// Merger merges the snapshots of named sources. It is not safe for
// concurrent use.
type Merger struct {
	expected []string
	snaps    map[string]Snapshot
	// firstSeen orders claimants: when each one first presented each
	// identity. Entries go when the claimant stops presenting it.
	firstSeen map[claimant]uint64
	seq       uint64
}

// claimant is one origin presenting one identity ("Pod/ns/name").
type claimant struct {
	id, source, key string
}

// NewMerger returns a merger that reports Synced once each of the named
// sources has sent a snapshot.
func NewMerger(expected ...string) *Merger {
	return &Merger{
		expected:  slices.Clone(expected),
		snaps:     map[string]Snapshot{},
		firstSeen: map[claimant]uint64{},
	}
}

// Update replaces the snapshot of s.Source and returns the new desired set.
//
// Claims are ordered by when they first appeared, except those made before
// every expected source reported once: a restarted host cannot know which
// of them came first, so they are ordered by source (the order given to
// NewMerger), then origin key. That way a name claimed by two sources goes
// to the same one at every start.
func (m *Merger) Update(s Snapshot) Desired {
	wasSynced := m.synced()
	m.snaps[s.Source] = s
	for _, it := range itemsOf(s) {
		c := claimant{it.id, s.Source, it.origin.Key}
		if _, ok := m.firstSeen[c]; !ok {
			if wasSynced {
				m.seq++
				m.firstSeen[c] = m.seq
			} else {
				m.firstSeen[c] = 0 // ordered when the sources are synced
			}
		}
	}
	if !wasSynced && m.synced() {
		m.orderStartupClaims()
	}
	return m.compute()
}

// before reports whether claim a ranks before claim b.
func (m *Merger) before(a, b claimant) bool {
	sa, sb := m.firstSeen[a], m.firstSeen[b]
	if sa == 0 && sb == 0 {
		return compareStartup(m.expected, a, b) < 0
	}
	return sa < sb
}

// compareStartup orders claims made before the sources synced: by source
// (the order given to NewMerger), origin key and identity.
func compareStartup(expected []string, a, b claimant) int {
	rank := func(source string) int {
		if i := slices.Index(expected, source); i >= 0 {
			return i
		}
		return len(expected)
	}
	return cmp.Or(cmp.Compare(rank(a.source), rank(b.source)), cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id))
}

// orderStartupClaims numbers the claims made before the sources synced by
// source, then origin key, then identity.
func (m *Merger) orderStartupClaims() {
	var startup []claimant
	for c, seq := range m.firstSeen {
		if seq == 0 {
			startup = append(startup, c)
		}
	}
	slices.SortFunc(startup, func(a, b claimant) int { return compareStartup(m.expected, a, b) })
	for _, c := range startup {
		m.seq++
		m.firstSeen[c] = m.seq
	}
}

// item is any object of a snapshot, reduced to what claims need.
type item struct {
	id     string
	origin Origin
	kind   string
	name   string
	index  int // into the snapshot's slice of that kind
	source string
}

func itemsOf(s Snapshot) []item {
	var items []item
	add := func(kind, ns, name string, origin Origin, i int) {
		full := name
		if ns != "" {
			full = ns + "/" + name
		}
		origin.Source = s.Source
		items = append(items, item{id: kind + "/" + full, origin: origin, kind: kind, name: full, index: i, source: s.Source})
	}
	for i, p := range s.Pods {
		add("Pod", p.Pod.Namespace, p.Pod.Name, p.Origin, i)
	}
	for i, v := range s.Volumes {
		add("PersistentVolume", "", v.Volume.Name, v.Origin, i)
	}
	for i, c := range s.Claims {
		add("PersistentVolumeClaim", c.Claim.Namespace, c.Claim.Name, c.Origin, i)
	}
	for i, c := range s.ConfigMaps {
		add("ConfigMap", c.ConfigMap.Namespace, c.ConfigMap.Name, c.Origin, i)
	}
	for i, c := range s.Secrets {
		add("Secret", c.Secret.Namespace, c.Secret.Name, c.Origin, i)
	}
	return items
}

func (m *Merger) compute() Desired {
	var d Desired
	names := make([]string, 0, len(m.snaps))
	for name := range m.snaps {
		names = append(names, name)
	}
	sort.Strings(names)

	var all []item
	for _, name := range names {
		all = append(all, itemsOf(m.snaps[name])...)
		d.Errors = append(d.Errors, m.snaps[name].Errors...)
	}
	winner := m.claims(all)

	var candidates []Pod
	for i, it := range all {
		s := m.snaps[it.source]
		w := all[winner[it.id]]
		var conflict error
		if winner[it.id] != i {
			conflict = &ConflictError{Kind: it.kind, Name: it.name, Loser: it.origin, Winner: w.origin}
		}
		if conflict != nil && it.kind != "Pod" {
			d.Errors = append(d.Errors, conflict)
			continue
		}
		switch it.kind {
		case "Pod":
			p := s.Pods[it.index]
			p.Origin = it.origin
			if conflict != nil {
				d.Rejected = append(d.Rejected, Rejected{Pod: p, Err: conflict})
				continue
			}
			candidates = append(candidates, p)
		case "PersistentVolume":
			v := s.Volumes[it.index]
			v.Origin = it.origin
			d.Volumes = append(d.Volumes, v)
		case "PersistentVolumeClaim":
			c := s.Claims[it.index]
			c.Origin = it.origin
			d.Claims = append(d.Claims, c)
		case "ConfigMap":
			c := s.ConfigMaps[it.index]
			c.Origin = it.origin
			d.ConfigMaps = append(d.ConfigMaps, c)
		case "Secret":
			c := s.Secrets[it.index]
			c.Origin = it.origin
			d.Secrets = append(d.Secrets, c)
		}
	}

	known := map[string]bool{}
	for _, c := range d.Claims {
		known[c.Claim.Namespace+"/"+c.Claim.Name] = true
	}
	badClaims := rejectedClaims(d.Errors)
	lookup := func(ns, name string) bool { return known[ns+"/"+name] }
	for _, p := range candidates {
		var errs field.ErrorList
		if p.Origin.Source == SourceAPIServer {
			errs = podvalidate.ValidateAPIServerPod(p.Pod) // its claims are the API server's
		} else {
			errs = podvalidate.ValidatePod(p.Pod, lookup)
		}
		if p.Origin.Source == SourceFile {
			errs = append(errs, podvalidate.ValidateStaticPod(p.Pod)...)
		}
		if len(errs) > 0 {
			err := fmt.Errorf("%s: pod %s/%s: %w", p.Origin.Where, p.Pod.Namespace, p.Pod.Name, errs.ToAggregate())
			if p.Origin.Source != SourceAPIServer {
				err = claimProblems(err, p.Pod, badClaims)
			}
			d.Rejected = append(d.Rejected, Rejected{Pod: p, Err: err})
			continue
		}
		d.Pods = append(d.Pods, p)
	}

	sort.SliceStable(d.Pods, func(i, j int) bool { return podKey(d.Pods[i]) < podKey(d.Pods[j]) })
	sort.SliceStable(d.Rejected, func(i, j int) bool { return podKey(d.Rejected[i].Pod) < podKey(d.Rejected[j].Pod) })
	sort.SliceStable(d.Volumes, func(i, j int) bool { return d.Volumes[i].Volume.Name < d.Volumes[j].Volume.Name })
	sort.SliceStable(d.Claims, func(i, j int) bool {
		return d.Claims[i].Claim.Namespace+"/"+d.Claims[i].Claim.Name < d.Claims[j].Claim.Namespace+"/"+d.Claims[j].Claim.Name
	})
	sort.SliceStable(d.ConfigMaps, func(i, j int) bool {
		return d.ConfigMaps[i].ConfigMap.Namespace+"/"+d.ConfigMaps[i].ConfigMap.Name < d.ConfigMaps[j].ConfigMap.Namespace+"/"+d.ConfigMaps[j].ConfigMap.Name
	})
	sort.SliceStable(d.Secrets, func(i, j int) bool {
		return d.Secrets[i].Secret.Namespace+"/"+d.Secrets[i].Secret.Name < d.Secrets[j].Secret.Namespace+"/"+d.Secrets[j].Secret.Name
	})
	d.Synced = m.synced()
	return d
}

// claims returns, for each identity, the index in all of the object that
// holds it, and forgets claimants that are gone.
func (m *Merger) claims(all []item) map[string]int {
	winner := map[string]int{}
	present := map[claimant]bool{}
	for i, it := range all {
		c := claimant{it.id, it.source, it.origin.Key}
		present[c] = true
		j, ok := winner[it.id]
		if !ok {
			winner[it.id] = i
			continue
		}
		h := all[j]
		if m.before(c, claimant{h.id, h.source, h.origin.Key}) {
			winner[it.id] = i
		}
	}
	for c := range m.firstSeen {
		if !present[c] {
			delete(m.firstSeen, c)
		}
	}
	return winner
}

func (m *Merger) synced() bool {
	for _, name := range m.expected {
		if _, ok := m.snaps[name]; !ok {
			return false
		}
	}
	return true
}

func podKey(p Pod) string { return p.Pod.Namespace + "/" + p.Pod.Name }

// rejectedClaims are the errors of the PersistentVolumeClaims a source
// could not take, by namespace/name: the first of each.
func rejectedClaims(errs []error) map[string]error {
	out := map[string]error{}
	for _, err := range errs {
		var oe ObjectError
		if !errors.As(err, &oe) {
			continue
		}
		kind, ns, name := oe.Object()
		if kind != "PersistentVolumeClaim" || name == "" {
			continue
		}
		if _, ok := out[ns+"/"+name]; !ok {
			out[ns+"/"+name] = err
		}
	}
	return out
}

// claimProblems adds to err, pod's rejection, why each claim of the pod
// that a source rejected was: the pod's "Not found" then names the
// claim's real problem.
func claimProblems(err error, pod *v1.Pod, bad map[string]error) error {
	seen := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		c := v.PersistentVolumeClaim
		if c == nil || seen[c.ClaimName] {
			continue
		}
		seen[c.ClaimName] = true
		if why, ok := bad[pod.Namespace+"/"+c.ClaimName]; ok {
			err = fmt.Errorf("%w; claim %s/%s was rejected: %v", err, pod.Namespace, c.ClaimName, why)
		}
	}
	return err
}
