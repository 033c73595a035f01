package kubecluster

import (
	"context"
	"testing"
	"time"
)

// StartForTest starts a cluster in a temporary directory and stops it when
// the test ends, printing the logs' tails if the test failed. Missing
// binaries fail the test with the command that builds them. Under -short
// (make unit) it skips the test instead.
func StartForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("a real etcd and kube-apiserver: not under -short")
	}
	c, err := Start(t.Context(), t.TempDir(), opts)
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			t.Log(c.Logs(40))
		}
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop the control plane: %v", err)
		}
	})
	return c
}
