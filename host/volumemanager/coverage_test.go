package volumemanager

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/podhost/podhost/lifecycle"
)

// The Manager is the lifecycle's Volumes, without importing lifecycle.
var _ lifecycle.Volumes = (*Manager)(nil)

// coveredScenarios are the cases of the kubelet's volume manager, by the IDs
// the transcripts under testdata name in their comments, that those
// transcripts replay (the others are plugin-side: the
// files, FC/iSCSI discovery, metrics; or not built yet: ReadWriteOncePod
// (26), expansion (31), mount refs and open devices (29, 30), node status
// (35's API part), the FC/iSCSI mount-table retry (39)).
var coveredScenarios = []string{
	"A1", "A2", "A3", "A4", "A5", "A6", "A8", "A9", "A10", "A11", "A12", "A13", "A15", "A16", "A24",
	"B17", "B18", "B19", "B21", "B22",
	"C25", "C27", "C28",
	"D32", "D33", "D34", "D35", "D36", "D38", "D40",
	"G70",
}

// TestScenarioCoverage checks that every scenario claimed as covered is
// named in a transcript comment.
func TestScenarioCoverage(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("transcripts: %v %v", files, err)
	}
	named := map[string]bool{}
	re := regexp.MustCompile(`(?m)^#.*$`)
	word := regexp.MustCompile(`\b[A-G][0-9]{1,2}\b`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range re.FindAllString(string(data), -1) {
			for _, id := range word.FindAllString(line, -1) {
				named[id] = true
			}
		}
	}
	for _, id := range coveredScenarios {
		if !named[id] {
			t.Errorf("scenario %s is claimed covered but no transcript names it", id)
		}
	}
}
