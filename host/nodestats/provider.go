package nodestats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// DefaultPeriod is how often the numbers are gathered, the kubelet's
// housekeeping of its stats.
const DefaultPeriod = 10 * time.Second

// ErrNotGathered is Summary's error before the first reading.
var ErrNotGathered = errors.New("node stats not gathered yet")

// Config is what a Provider needs.
type Config struct {
	NodeName string
	// RootDir is the host's root directory: its filesystem is the node's.
	RootDir string
	// Runtime asks the runtime plugin for its stats.
	Runtime func(ctx context.Context) (*runtimev1.ListStatsResponse, error)
	// Volumes gives the pods' volumes' usage by pod UID from a cache; nil
	// for none.
	Volumes func() map[string][]Volume
	Period  time.Duration // zero: DefaultPeriod
	Logger  hclog.Logger
	// System reads the node's numbers; nil: /proc and statfs.
	System System
}

// System reads the node's own numbers.
type System interface {
	// Node reads CPU time, memory and the boot time.
	Node() (NodeNumbers, error)
	// Statfs reads the filesystem holding path.
	Statfs(path string) (FsNumbers, error)
}

// Provider keeps the last reading and builds the summary from it.
type Provider struct {
	cfg Config

	mu        sync.Mutex
	cur, prev *Sample
	// lastErr is the runtime's last error, so that one that repeats
	// every period (a plugin without stats) is logged once.
	lastErr string
}

// New returns a provider that has read nothing yet.
func New(cfg Config) *Provider {
	if cfg.Period <= 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.System == nil {
		cfg.System = procSystem{}
	}
	return &Provider{cfg: cfg}
}

// Run gathers once, then every period until ctx ends.
func (p *Provider) Run(ctx context.Context) {
	t := time.NewTicker(p.cfg.Period)
	defer t.Stop()
	for {
		p.Gather(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Gather reads every number once and keeps the reading. A part that fails
// is logged (once while it keeps failing alike) and left out of it. Calls
// of Gather must not overlap (Run makes them one after another).
func (p *Provider) Gather(ctx context.Context) {
	s := &Sample{Time: time.Now()}
	node, err := p.cfg.System.Node()
	if err != nil {
		p.cfg.Logger.Warn("reading the node's numbers", "err", err)
	}
	s.Node = node
	if s.Node.RootFs, err = p.cfg.System.Statfs(p.cfg.RootDir); err != nil {
		p.cfg.Logger.Warn("reading the root directory's filesystem", "err", err)
	}
	// A runtime that does not answer within a period gives no reading
	// rather than holding the next ones back.
	rctx, cancel := context.WithTimeout(ctx, p.cfg.Period)
	rt, err := p.cfg.Runtime(rctx)
	cancel()
	if msg := errString(err); msg != p.lastErr {
		p.lastErr = msg
		if err != nil {
			p.cfg.Logger.Warn("reading the runtime's stats", "err", err)
		}
	}
	if err == nil {
		s.Runtime = rt
		if fss := rt.GetImageFilesystems(); len(fss) > 0 && fss[0].GetMountpoint() != "" {
			if s.ImageFs, err = p.cfg.System.Statfs(fss[0].GetMountpoint()); err != nil {
				p.cfg.Logger.Warn("reading the image filesystem", "err", err)
			}
		}
	}
	if p.cfg.Volumes != nil {
		s.Volumes = p.cfg.Volumes()
	}
	p.mu.Lock()
	p.prev, p.cur = p.cur, s
	p.mu.Unlock()
}

// Summary is the summary of the last reading; ErrNotGathered before the
// first. A reading whose runtime call failed has no pods, and an error
// saying so comes with it.
func (p *Provider) Summary() (statsapi.Summary, error) {
	p.mu.Lock()
	cur, prev := p.cur, p.prev
	p.mu.Unlock()
	if cur == nil {
		return statsapi.Summary{}, ErrNotGathered
	}
	s := Build(p.cfg.NodeName, *cur, prev)
	if cur.Runtime == nil {
		return s, fmt.Errorf("the runtime's stats of %s could not be read", cur.Time.Format(time.RFC3339))
	}
	return s, nil
}

// RuntimeStats is the runtime's answer of the last reading, for the other
// users of the same numbers (host/eviction), so that the runtime is asked
// once per period for all of them. ErrNotGathered before the first
// reading; an error when the last reading's runtime call failed.
func (p *Provider) RuntimeStats(context.Context) (*runtimev1.ListStatsResponse, error) {
	p.mu.Lock()
	cur := p.cur
	p.mu.Unlock()
	switch {
	case cur == nil:
		return nil, ErrNotGathered
	case cur.Runtime == nil:
		return nil, fmt.Errorf("the runtime's stats of %s could not be read", cur.Time.Format(time.RFC3339))
	}
	return cur.Runtime, nil
}

// LastReading is the last reading itself, for the other users of the
// node's numbers (host/eviction's signals), so that /proc and statfs are
// read once per period for all of them; ErrNotGathered before the first.
func (p *Provider) LastReading() (Sample, error) {
	p.mu.Lock()
	cur := p.cur
	p.mu.Unlock()
	if cur == nil {
		return Sample{}, ErrNotGathered
	}
	return *cur, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
