package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Mutant is a plugin with one bug planted in it, for showing that a
// conformance kit catches the bug: Mutate plants it in P, and CaughtBy is
// the kit subtest that must fail, as go test names it ("Stage_twice_succeeds").
type Mutant[P any] struct {
	Mutate   func(P)
	CaughtBy string
}

// ServedMutant returns the mutant a test that serves mutants is to plant,
// named by the environment variable env. Unset, it returns the zero Mutant,
// whose nil Mutate leaves the plugin as it is; a name not in mutants stops t.
func ServedMutant[P any](t *testing.T, env string, mutants map[string]Mutant[P]) Mutant[P] {
	t.Helper()
	name := os.Getenv(env)
	mu, ok := mutants[name]
	if !ok && name != "" {
		t.Fatalf("unknown mutant %q", name)
	}
	return mu
}

// KitCatchesMutants runs, in a subtest per mutant, the test named test in a
// child process (this test binary, re-executed) with env naming the mutant,
// and fails the subtest unless the child fails in the mutant's CaughtBy
// subtest.
func KitCatchesMutants[P any](t *testing.T, env, test string, mutants map[string]Mutant[P]) {
	t.Helper()
	for name, mu := range mutants {
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+test+"$", "-test.v")
			cmd.Env = append(os.Environ(), env+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the kit passed mutant %q; want it to fail\n%s", name, out)
			}
			if want := "--- FAIL: " + test + "/" + mu.CaughtBy + " "; !strings.Contains(string(out), want) {
				t.Errorf("the kit's output lacks %q\n%s", want, out)
			}
		})
	}
}
