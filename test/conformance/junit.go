package conformance

import (
	"encoding/xml"
	"fmt"
	"os"
	"strings"
)

// Spec is one spec of a ginkgo JUnit report.
type Spec struct {
	// Name is the spec's full text as the report gives it: the node type
	// ("[It]"), the container texts and the spec text.
	Name string
	// Status is ginkgo's: passed, failed, skipped, pending, panicked,
	// timedout, interrupted or aborted.
	Status string
	// Seconds is the spec's run time.
	Seconds float64
	// Failure is the failure message (empty unless the spec failed), and
	// Location where it failed, from the failure's description.
	Failure, Location string
	// SkipReason is why a spec skipped itself while running (ginkgo's
	// "skipped - REASON"); empty for a spec the focus or skip left out.
	SkipReason string
}

// Failed reports whether the spec ran and did not pass.
func (s Spec) Failed() bool {
	switch s.Status {
	case "passed", "skipped", "pending":
		return false
	}
	return true
}

type junitSuites struct {
	Suites []struct {
		Cases []struct {
			Name    string  `xml:"name,attr"`
			Status  string  `xml:"status,attr"`
			Time    float64 `xml:"time,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// ReadJUnit reads the specs of a ginkgo JUnit report. Suite-level nodes
// ([SynchronizedBeforeSuite], [ReportAfterSuite], …) are specs too; a
// failed one fails every spec after it.
func ReadJUnit(path string) ([]Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseJUnit(data)
}

// maxCause bounds a failure's cause in the report.
const maxCause = 240

func parseJUnit(data []byte) ([]Spec, error) {
	var doc junitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("reading the JUnit report: %w", err)
	}
	var specs []Spec
	for _, suite := range doc.Suites {
		for _, c := range suite.Cases {
			s := Spec{Name: c.Name, Status: c.Status, Seconds: c.Time}
			switch {
			case c.Failure != nil:
				s.Failure, s.Location = failureCause(c.Failure.Message, c.Failure.Text)
			case c.Error != nil:
				s.Failure, s.Location = failureCause(c.Error.Message, c.Error.Text)
			case c.Skipped != nil:
				if reason, ok := strings.CutPrefix(c.Skipped.Message, "skipped - "); ok {
					s.SkipReason, _ = failureCause(reason, "")
				}
			}
			if s.Status == "" {
				return nil, fmt.Errorf("reading the JUnit report: spec %q has no status (not a ginkgo v2 report?)", c.Name)
			}
			specs = append(specs, s)
		}
	}
	return specs, nil
}

// failureCause turns a failure into one line: the message's lines joined
// (at most maxCause bytes), and the location ginkgo writes in the
// description ("[FAILED] …\nIn [It] at: FILE:LINE @ …").
func failureCause(message, text string) (cause, location string) {
	cause = strings.Join(strings.Fields(message), " ")
	if len(cause) > maxCause {
		cause = cause[:maxCause] + " …"
	}
	for _, line := range strings.Split(text, "\n") {
		if _, at, ok := strings.Cut(line, " at: "); ok && strings.HasPrefix(strings.TrimSpace(line), "In [") {
			location, _, _ = strings.Cut(strings.TrimSpace(at), " @ ")
			break
		}
	}
	return cause, location
}
