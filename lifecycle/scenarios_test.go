package lifecycle_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// scenarioIDs are the 70 behaviour scenarios of section 3 of the lifecycle
// specification: groups A to G, numbered 1 to 70.
var scenarioIDs = func() []string {
	groups := []struct {
		letter   string
		from, to int
	}{{"A", 1, 22}, {"B", 23, 25}, {"C", 26, 33}, {"D", 34, 39}, {"E", 40, 54}, {"F", 55, 67}, {"G", 68, 70}}
	var ids []string
	for _, g := range groups {
		for n := g.from; n <= g.to; n++ {
			ids = append(ids, fmt.Sprintf("%s%d", g.letter, n))
		}
	}
	return ids
}()

// TestScenarioCoverage checks that every scenario is named by a transcript
// or a test case.
func TestScenarioCoverage(t *testing.T) {
	if len(scenarioIDs) != 70 {
		t.Fatalf("%d scenario IDs; want 70", len(scenarioIDs))
	}
	var files []string
	for _, pattern := range []string{"testdata/*.txt", "*_test.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var corpus []byte
	for _, f := range files {
		if f == "scenarios_test.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, b...)
		corpus = append(corpus, '\n')
	}
	for _, id := range scenarioIDs {
		re := regexp.MustCompile(`(^|[^A-Za-z0-9])` + id + `([^0-9]|$)`)
		if !re.Match(corpus) {
			t.Errorf("scenario %s is not covered by any transcript or test case", id)
		}
	}
}
