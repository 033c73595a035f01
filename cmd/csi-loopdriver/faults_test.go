package main

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestFaultInjector(t *testing.T) {
	type call struct {
		rpc, volume string
		wantCode    codes.Code
		wantFault   string
	}
	fail := func(rpc string, c codes.Code, times int) fault {
		return fault{rpc: rpc, action: actionFail, code: c, times: times}
	}
	tests := []struct {
		name   string
		faults []fault
		calls  []call
	}{
		{"times then served", []fault{fail("NodeStageVolume", codes.DeadlineExceeded, 2)}, []call{
			{"NodeStageVolume", "v", codes.DeadlineExceeded, "fail"},
			{"NodePublishVolume", "v", codes.OK, ""},
			{"NodeStageVolume", "v", codes.DeadlineExceeded, "fail"},
			{"NodeStageVolume", "v", codes.OK, ""},
		}},
		{"used up in order", []fault{fail("NodeStageVolume", codes.DeadlineExceeded, 1), fail("NodeStageVolume", codes.InvalidArgument, 1)}, []call{
			{"NodeStageVolume", "v", codes.DeadlineExceeded, "fail"},
			{"NodeStageVolume", "v", codes.InvalidArgument, "fail"},
			{"NodeStageVolume", "v", codes.OK, ""},
		}},
		{"every call", []fault{fail("Probe", codes.Unavailable, 0)}, []call{
			{"Probe", "", codes.Unavailable, "fail"},
			{"Probe", "", codes.Unavailable, "fail"},
			{"Probe", "", codes.Unavailable, "fail"},
		}},
		{"one volume", []fault{{rpc: "NodeUnstageVolume", action: actionFail, code: codes.Internal, times: 1, volume: "a"}}, []call{
			{"NodeUnstageVolume", "b", codes.OK, ""},
			{"NodeUnstageVolume", "a", codes.Internal, "fail"},
			{"NodeUnstageVolume", "a", codes.OK, ""},
		}},
		{"delay serves the call", []fault{{rpc: "NodePublishVolume", action: actionDelay, delay: 3 * time.Second, times: 1}}, []call{
			{"NodePublishVolume", "v", codes.OK, "delay"},
			{"NodePublishVolume", "v", codes.OK, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi := newFaultInjector(tt.faults, nil)
			var waited []time.Duration
			fi.wait = func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil }
			for i, c := range tt.calls {
				name, err := fi.apply(t.Context(), c.rpc, c.volume, nil)
				if got := status.Code(err); got != c.wantCode || name != c.wantFault {
					t.Errorf("call %d (%s %s): code %s fault %q, want %s %q", i, c.rpc, c.volume, got, name, c.wantCode, c.wantFault)
				}
			}
			for _, f := range tt.faults {
				if f.action == actionDelay && (len(waited) != 1 || waited[0] != f.delay) {
					t.Errorf("waited %v, want once %s", waited, f.delay)
				}
			}
		})
	}
}

func TestFaultInjectorEndsWaits(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel2()
	stopped := make(chan struct{})
	close(stopped)
	hang := fault{rpc: "NodeStageVolume", action: actionHang}
	delay := fault{rpc: "NodeStageVolume", action: actionDelay, delay: time.Hour}
	// A delay's wait either is over at once, unless its context already
	// ended, or lasts until its context ends.
	waitDone := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	waitForever := func(ctx context.Context, _ time.Duration) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name     string
		f        fault
		ctx      context.Context
		stopping chan struct{}
		wait     func(context.Context, time.Duration) error
		want     codes.Code
	}{
		{"hang until the caller's deadline", hang, expired, nil, nil, codes.DeadlineExceeded},
		{"hang until the caller cancels", hang, cancelled, nil, nil, codes.Canceled},
		{"hang until the driver stops", hang, t.Context(), stopped, nil, codes.Unavailable},
		{"delay outlives the caller's deadline", delay, expired, nil, waitDone, codes.OK},
		{"delay cut by the driver's stop", delay, t.Context(), stopped, waitForever, codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi := newFaultInjector([]fault{tt.f}, tt.stopping)
			fi.wait = tt.wait
			name, err := fi.apply(tt.ctx, tt.f.rpc, "v", nil)
			if got := status.Code(err); got != tt.want || name != string(tt.f.action) {
				t.Errorf("code %s (%v) fault %q, want %s %q", got, err, name, tt.want, tt.f.action)
			}
		})
	}
}

func TestVolumeLocks(t *testing.T) {
	var l volumeLocks
	unlockA, err := l.lock("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.lock("a"); status.Code(grpcError(err)) != codes.Aborted {
		t.Errorf("second lock of a: %v, want ABORTED", grpcError(err))
	}
	unlockB, err := l.lock("b")
	if err != nil {
		t.Errorf("lock of b while a is held: %v", err)
	} else {
		unlockB()
	}
	unlockA()
	if unlock, err := l.lock("a"); err != nil {
		t.Errorf("lock of a after unlock: %v", err)
	} else {
		unlock()
	}
}

// TestFaultInjectorReplace: faults read again replace the old ones with
// their counts from zero; an empty list clears them.
func TestFaultInjectorReplace(t *testing.T) {
	fi := newFaultInjector([]fault{{rpc: "NodeStageVolume", action: actionFail, code: codes.Internal}}, nil)
	steps := []struct {
		replace  []fault
		set      bool
		wantCode codes.Code
	}{
		{nil, false, codes.Internal},
		{[]fault{{rpc: "NodeStageVolume", action: actionFail, code: codes.Aborted, times: 1}}, true, codes.Aborted},
		{nil, false, codes.OK}, // used up
		{[]fault{{rpc: "NodeStageVolume", action: actionFail, code: codes.Aborted, times: 1}}, true, codes.Aborted},
		{nil, true, codes.OK}, // cleared
	}
	for i, s := range steps {
		if s.set {
			fi.replace(s.replace)
		}
		var applied []string
		_, err := fi.apply(t.Context(), "NodeStageVolume", "v", func(a string) error { applied = append(applied, a); return nil })
		if got := status.Code(err); got != s.wantCode || (len(applied) == 1) != (s.wantCode != codes.OK) {
			t.Errorf("step %d: code %s, applied %v; want %s", i, got, applied, s.wantCode)
		}
	}
}
