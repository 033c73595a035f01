package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/podhost/podhost/sdk"
)

// csiPlugin is the state of volume-csi: its config, one connection per
// configured driver and one per driver registered at run time.
type csiPlugin struct {
	mu         sync.Mutex
	cfg        *config // nil until configured
	drivers    drivers
	registered drivers
}

// configure replaces the config; connections of drivers whose config did
// not change are kept. A configured driver may not have the name of a
// registered one.
func (p *csiPlugin) configure(c config) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, d := range c.Drivers {
		if _, ok := p.registered[d.Name]; ok {
			return fmt.Errorf("drivers[%d].name: %q registered at run time", i, d.Name)
		}
	}
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
	if name == "" && len(p.drivers)+len(p.registered) == 1 {
		for _, dc := range p.drivers {
			return dc, nil
		}
		for _, dc := range p.registered {
			return dc, nil
		}
	}
	if name == "" {
		return nil, fmt.Errorf("%w: driver: is required when more than one driver is configured", errInvalid)
	}
	if dc, ok := p.drivers[name]; ok {
		return dc, nil
	}
	if dc, ok := p.registered[name]; ok {
		return dc, nil
	}
	return nil, fmt.Errorf("%w: csi driver %q is neither configured nor registered", errUnknownDriver, name)
}

// register connects to a driver that registered at run time, checks that
// it answers to name and fetches its facts; it then serves volumes as a
// configured driver does. A driver registered again at the same endpoint
// keeps its connection; at another, the new one replaces the old once it
// answers.
func (p *csiPlugin) register(ctx context.Context, name, endpoint string) (*driverFacts, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: name: is required", errInvalid)
	}
	if !strings.HasPrefix(endpoint, "unix://") {
		endpoint = "unix://" + endpoint
	}
	if _, err := sdk.UnixSocketPath(endpoint); err != nil {
		return nil, fmt.Errorf("%w: endpoint: %w", errInvalid, err)
	}
	d := driver{Name: name, Endpoint: endpoint}
	p.mu.Lock()
	if p.cfg == nil {
		p.mu.Unlock()
		return nil, errNotConfigured
	}
	if _, ok := p.drivers[name]; ok {
		p.mu.Unlock()
		return nil, fmt.Errorf("%w: name: %q is a driver of the plugin's config", errInvalid, name)
	}
	dc, same := p.registered[name]
	p.mu.Unlock()
	if !same || dc.cfg != d {
		var err error
		if dc, err = dialDriver(d); err != nil {
			return nil, fmt.Errorf("%w: endpoint: %w", errInvalid, err)
		}
		same = false
	}
	f, err := dc.getFacts(ctx)
	if err != nil {
		if !same {
			dc.close()
		}
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.drivers[name]; ok || p.cfg == nil {
		// configured (or closed) while we asked the driver
		if !same {
			dc.close()
		}
		return nil, fmt.Errorf("%w: name: %q is a driver of the plugin's config", errInvalid, name)
	}
	if old, ok := p.registered[name]; ok && old != dc {
		old.close()
	}
	if p.registered == nil {
		p.registered = drivers{}
	}
	p.registered[name] = dc
	return f, nil
}

// deregister forgets a driver register added; nothing to forget is no
// error.
func (p *csiPlugin) deregister(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if dc, ok := p.registered[name]; ok {
		dc.close()
		delete(p.registered, name)
	}
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
	conns := make([]*driverConn, 0, len(p.drivers)+len(p.registered))
	for _, dc := range p.drivers {
		conns = append(conns, dc)
	}
	for _, dc := range p.registered {
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
	for _, dc := range p.registered {
		dc.close()
	}
	p.drivers, p.registered = nil, nil
}
