package volumemanager

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

var update = flag.Bool("update", false, "rewrite host/volumemanager/testdata transcripts with the actual output")

// TestTranscripts replays the scenario scripts under testdata; each file
// starts with a fresh harness and "reset" starts another.
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
			h := newHarness()
			lifecycletest.RunTranscript(t, path, *update, func(c *lifecycletest.Cmd) string {
				if c.Name == "reset" {
					h = newHarness()
					return "ok"
				}
				return h.run(c)
			})
		})
	}
}
