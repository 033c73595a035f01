package lifecycle_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

var update = flag.Bool("update", false, "rewrite lifecycle/testdata transcripts with the actual output")

// TestTranscripts replays every scenario script under testdata. Each file
// starts with a fresh harness; the command "reset" starts another one.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			h := lifecycletest.NewHarness()
			check := func() {
				if len(h.Violations) > 0 {
					t.Errorf("%s: invariant violated: %v", path, h.Violations)
				}
			}
			lifecycletest.RunTranscript(t, path, *update, func(c *lifecycletest.Cmd) string {
				if c.Name == "reset" {
					check()
					h = lifecycletest.NewHarness()
					return "ok"
				}
				return h.Run(c)
			})
			check()
		})
	}
}
