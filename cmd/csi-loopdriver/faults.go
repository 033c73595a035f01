package main

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// faultInjector applies the configured faults to calls. The faults of one
// RPC are used up in the order the config lists them: a call gets the
// first fault of its RPC (and volume) that has calls left.
type faultInjector struct {
	mu     sync.Mutex
	faults []fault
	used   []int // calls each fault has taken
	// wait blocks for d or until ctx is done; tests replace it.
	wait func(ctx context.Context, d time.Duration) error
	// stopping is closed when the driver stops, ending hung calls.
	stopping <-chan struct{}
}

func newFaultInjector(faults []fault, stopping <-chan struct{}) *faultInjector {
	return &faultInjector{faults: faults, used: make([]int, len(faults)), wait: sleepCtx, stopping: stopping}
}

// replace puts faults in place of the configured ones, their counts
// from zero (the config read again on SIGHUP). Calls in flight keep the
// fault they got.
func (fi *faultInjector) replace(faults []fault) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.faults, fi.used = faults, make([]int, len(faults))
}

// take returns the fault the next call of rpc on volume gets, counting
// the call against it; ok is false when none applies.
func (fi *faultInjector) take(rpc, volume string) (fault, bool) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	for i, f := range fi.faults {
		if f.rpc != rpc || (f.volume != "" && f.volume != volume) {
			continue
		}
		if f.times != 0 && fi.used[i] >= f.times {
			continue
		}
		fi.used[i]++
		return f, true
	}
	return fault{}, false
}

// apply runs the fault for one call before it is served. It returns the
// error the call must answer with, or nil to serve the call; name is the
// action taken, empty when no fault applied. After a delay the call is
// served even if the caller has given up (its work goes on, as a slow
// driver's would): the caller must serve it with context.WithoutCancel.
// applied, if not nil, is told the action as soon as a fault applies; its
// error is the call's answer, before the fault acts.
func (fi *faultInjector) apply(ctx context.Context, rpc, volume string, applied func(action string) error) (name string, err error) {
	f, ok := fi.take(rpc, volume)
	if !ok {
		return "", nil
	}
	if applied != nil {
		if err := applied(string(f.action)); err != nil { // before the fault takes its time
			return string(f.action), err
		}
	}
	switch f.action {
	case actionFail:
		return string(f.action), status.Errorf(f.code, "injected fault: %s fails with %s", rpc, f.code)
	case actionDelay:
		waitCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		go func() {
			select {
			case <-fi.stopping:
				cancel()
			case <-waitCtx.Done():
			}
		}()
		if err := fi.wait(waitCtx, f.delay); err != nil {
			return string(f.action), status.Errorf(codes.Unavailable, "injected fault: %s delayed until the driver stopped", rpc)
		}
		return string(f.action), nil
	default: // actionHang
		select {
		case <-ctx.Done():
			return string(f.action), status.FromContextError(ctx.Err()).Err()
		case <-fi.stopping:
			return string(f.action), status.Errorf(codes.Unavailable, "injected fault: %s hung until the driver stopped", rpc)
		}
	}
}

// sleepCtx waits d, or less when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
