package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWaitReturnsZeroOnTermAndInt(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		signals := make(chan os.Signal, 3)
		signals <- syscall.SIGCHLD
		signals <- sig
		if got := wait(signals); got != 0 {
			t.Errorf("wait after %v = %d, want 0", sig, got)
		}
		if len(signals) != 0 {
			t.Errorf("wait did not consume the signals up to %v", sig)
		}
	}
}

// TestReapCollectsZombies forks a child that exits at once and checks that
// reap collects it.
func TestReapCollectsZombies(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for state(pid) != "Z" {
		if time.Now().After(deadline) {
			t.Fatalf("child %d never became a zombie (state %q)", pid, state(pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
	reap()
	if s := state(pid); s != "" {
		t.Errorf("child %d still exists after reap, state %q", pid, s)
	}
}

// state returns the process state letter of pid, or "" if it is gone.
func state(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}
