package volumemanager

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Stats defaults. The kubelet refreshes its cached volume stats about
// once a minute (volumeStatsAggPeriod); so does the gatherer, and it
// asks about a volume at once when it first becomes a target.
const (
	DefaultStatsPeriod      = time.Minute
	DefaultStatsCallTimeout = 10 * time.Second
)

// MetricsPlugins asks the plugins about volume usage.
type MetricsPlugins interface {
	// SupportsMetrics reports whether the plugin that serves v declares
	// that it serves metrics; an error means it cannot tell now (its
	// plugin is not running). It is never a metrics call.
	SupportsMetrics(ctx context.Context, v Volume) (bool, error)
	// GetMetrics asks for the usage of pv; only called after
	// SupportsMetrics said yes. ErrMetricsNotSupported means none.
	GetMetrics(ctx context.Context, pv PodVolume) (VolumeUsage, error)
}

// StatsSource is what the gatherer needs of the volume manager; Manager
// implements it.
type StatsSource interface {
	StatsTargets() []PodVolume
	BeginStats(ctx context.Context, pv PodVolume) (context.Context, func(), bool)
	Changes() <-chan struct{}
}

// Failure reasons passed to StatsConfig.Failed.
const (
	StatsFailedCapabilities = "capabilities" // SupportsMetrics failed
	StatsFailedCall         = "call"         // GetMetrics failed
	StatsFailedAnswer       = "answer"       // the usage fails Check
)

// StatsConfig is what a StatsGatherer needs. Failed, if set, is told of
// every volume skipped for an error (to log and count it).
type StatsConfig struct {
	Source      StatsSource
	Plugins     MetricsPlugins
	Clock       Clock
	Period      time.Duration // zero: DefaultStatsPeriod
	CallTimeout time.Duration // zero: DefaultStatsCallTimeout
	Failed      func(pv PodVolume, reason string, err error)
}

// ClaimStats is the usage of one claim, as the kubelet labels it.
type ClaimStats struct {
	Claim types.NamespacedName
	Usage VolumeUsage
}

type statsKey struct {
	pod  types.UID
	name string
}

// StatsGatherer keeps the usage of the claims of running pods, asking the
// plugins periodically in one goroutine (Run). A scrape reads the cache
// (Claims) and never calls a plugin. A plugin that does not declare
// metrics is never asked; one that fails or answers nonsense gets its
// volume skipped until the next period, and Failed is told.
type StatsGatherer struct {
	cfg   StatsConfig
	mu    sync.Mutex
	stats map[statsKey]ClaimStats
	tried map[statsKey]time.Time
}

// NewStatsGatherer returns a gatherer with an empty cache.
func NewStatsGatherer(cfg StatsConfig) *StatsGatherer {
	if cfg.Period <= 0 {
		cfg.Period = DefaultStatsPeriod
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultStatsCallTimeout
	}
	return &StatsGatherer{cfg: cfg, stats: map[statsKey]ClaimStats{}, tried: map[statsKey]time.Time{}}
}

// Run gathers until ctx is done: each target once when it appears, then
// once per period.
func (g *StatsGatherer) Run(ctx context.Context) {
	for {
		changes := g.cfg.Source.Changes()
		next := g.Gather(ctx)
		var timer <-chan time.Time
		if !next.IsZero() {
			timer = g.cfg.Clock.After(next.Sub(g.cfg.Clock.Now()))
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-timer:
		}
	}
}

// Gather asks about every target that is due and forgets the volumes
// that are no longer targets. It returns when the next target is due
// (zero when there is none).
func (g *StatsGatherer) Gather(ctx context.Context) time.Time {
	now := g.cfg.Clock.Now()
	targets := g.cfg.Source.StatsTargets()
	g.forgetAllBut(targets)
	var next time.Time
	for _, pv := range targets {
		if ctx.Err() != nil {
			return time.Time{}
		}
		k := statsKey{pv.Pod, pv.Name}
		g.mu.Lock()
		last, seen := g.tried[k]
		g.mu.Unlock()
		due := last.Add(g.cfg.Period)
		if !seen || !now.Before(due) {
			g.mu.Lock()
			g.tried[k] = now
			g.mu.Unlock()
			g.gatherOne(ctx, pv)
			due = now.Add(g.cfg.Period)
		}
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	return next
}

func (g *StatsGatherer) forgetAllBut(targets []PodVolume) {
	keep := map[statsKey]bool{}
	for _, pv := range targets {
		keep[statsKey{pv.Pod, pv.Name}] = true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.tried {
		if !keep[k] {
			delete(g.tried, k)
			delete(g.stats, k)
		}
	}
}

// gatherOne asks pv's plugin and caches the answer, or drops the cached
// one.
func (g *StatsGatherer) gatherOne(ctx context.Context, pv PodVolume) {
	k := statsKey{pv.Pod, pv.Name}
	u, reason, err := g.ask(ctx, pv)
	g.mu.Lock()
	if err == nil && reason == "" {
		g.stats[k] = ClaimStats{Claim: pv.Claim, Usage: u}
	} else {
		delete(g.stats, k)
	}
	g.mu.Unlock()
	if reason != "" && g.cfg.Failed != nil {
		g.cfg.Failed(pv, reason, err)
	}
}

// errSkipped marks a volume that gets no stats without a failure.
var errSkipped = errors.New("skipped")

// ask returns pv's usage; a failure has its reason, a volume skipped
// without failure errSkipped and no reason.
func (g *StatsGatherer) ask(ctx context.Context, pv PodVolume) (VolumeUsage, string, error) {
	capCtx, cancel := context.WithTimeout(ctx, g.cfg.CallTimeout)
	ok, err := g.cfg.Plugins.SupportsMetrics(capCtx, pv.Volume)
	cancel()
	if err != nil {
		return VolumeUsage{}, StatsFailedCapabilities, fmt.Errorf("capabilities of the plugin of %s: %w", pv.Volume.ID, err)
	}
	if !ok {
		return VolumeUsage{}, "", errSkipped
	}
	callCtx, done, ok := g.cfg.Source.BeginStats(ctx, pv)
	if !ok {
		return VolumeUsage{}, "", errSkipped // no longer mounted, or an operation started
	}
	callCtx, cancel = context.WithTimeout(callCtx, g.cfg.CallTimeout)
	u, err := g.cfg.Plugins.GetMetrics(callCtx, pv)
	cancel()
	done()
	switch {
	case errors.Is(err, ErrMetricsNotSupported):
		return VolumeUsage{}, "", errSkipped
	case err != nil:
		return VolumeUsage{}, StatsFailedCall, fmt.Errorf("metrics of %s: %w", pv.Volume.ID, err)
	}
	if err := u.Check(); err != nil {
		return VolumeUsage{}, StatsFailedAnswer, fmt.Errorf("metrics of %s: %w", pv.Volume.ID, err)
	}
	return u, "", nil
}

// Claims is the cached usage of every claim that is still a target, one
// entry per claim (two pods of one claim report it once), sorted.
func (g *StatsGatherer) Claims() []ClaimStats {
	targets := g.cfg.Source.StatsTargets()
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[types.NamespacedName]bool{}
	var out []ClaimStats
	for _, pv := range targets {
		s, ok := g.stats[statsKey{pv.Pod, pv.Name}]
		if !ok || seen[s.Claim] {
			continue
		}
		seen[s.Claim] = true
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ClaimStats) int {
		return cmp.Or(cmp.Compare(a.Claim.Namespace, b.Claim.Namespace), cmp.Compare(a.Claim.Name, b.Claim.Name))
	})
	return out
}
