package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// csiPlugin is the state of volume-csi: its config and one connection per
// configured driver.
type csiPlugin struct {
	mu      sync.Mutex
	cfg     *config // nil until configured
	drivers drivers
}

// configure replaces the config; connections of drivers whose config did
// not change are kept.
func (p *csiPlugin) configure(c config) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next, unused, err := connect(c, p.drivers)
	if err != nil {
		return err
	}
	p.cfg, p.drivers = &c, next
	for _, dc := range unused {
		dc.close()
	}
	return nil
}

// driverFor returns the connection to the driver a volume names. An empty
// name is the only configured driver, when there is just one.
func (p *csiPlugin) driverFor(name string) (*driverConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cfg == nil {
		return nil, errNotConfigured
	}
	if name == "" && len(p.drivers) == 1 {
		for _, dc := range p.drivers {
			return dc, nil
		}
	}
	if name == "" {
		return nil, fmt.Errorf("%w: driver: is required when more than one driver is configured", errInvalid)
	}
	dc, ok := p.drivers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q: not among the configured drivers", errUnknownDriver, name)
	}
	return dc, nil
}

// stateDir is where the records of published volumes are kept.
func (p *csiPlugin) stateDir() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cfg == nil {
		return "", errNotConfigured
	}
	return p.cfg.stateDir(), nil
}

// probe is ready once configured; it asks every driver who it is, so that a
// restarted driver's facts are fetched again, and names those that fail.
func (p *csiPlugin) probe(ctx context.Context) (bool, string) {
	p.mu.Lock()
	if p.cfg == nil {
		p.mu.Unlock()
		return false, "not configured"
	}
	conns := make([]*driverConn, 0, len(p.drivers))
	for _, dc := range p.drivers {
		conns = append(conns, dc)
	}
	p.mu.Unlock()
	var problems []string
	for _, dc := range conns {
		if err := dc.check(ctx); err != nil {
			problems = append(problems, err.Error())
		}
	}
	slices.Sort(problems)
	return true, strings.Join(problems, "; ")
}

// close releases every connection.
func (p *csiPlugin) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, dc := range p.drivers {
		dc.close()
	}
	p.drivers = nil
}
