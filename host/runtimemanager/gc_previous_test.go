package runtimemanager

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestGarbageCollectKeepsThePreviousContainer: while a restarted container
// runs, GC keeps the one before it (for `podhost logs --previous`) and
// removes only older dead ones.
func TestGarbageCollectKeepsThePreviousContainer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pod := newPod("crashy", "a")
	e.mustSync(pod)
	none := func(types.UID) bool { return false }
	for _, tc := range []struct {
		name string
		want []uint32 // attempts left after GC, sorted
	}{
		{"after one restart", []uint32{0, 1}},
		{"after two restarts", []uint32{1, 2}},
	} {
		e.exit(pod, "a", 1)
		e.clock.Step(BackOffMax)
		e.mustSync(pod)
		if err := e.m.GarbageCollect(ctx, none); err != nil {
			t.Fatalf("%s: GarbageCollect: %v", tc.name, err)
		}
		var got []uint32
		for _, c := range e.fake.Containers() {
			got = append(got, c.GetMetadata().GetAttempt())
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: attempts left %v; want %v", tc.name, got, tc.want)
		}
	}
}
