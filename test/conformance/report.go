package conformance

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Run is what one `make conformance` did, for CONFORMANCE.md.
type Run struct {
	// Commit is the podhost commit the node was built from ("+dirty" when
	// the worktree had changes).
	Commit string
	// Start is when the suite started; Duration how long ginkgo ran.
	Start    time.Time
	Duration time.Duration
	// CPUs and the load averages (1, 5 and 15 minutes, /proc/loadavg)
	// before and after the suite.
	CPUs                  int
	LoadBefore, LoadAfter string
	// Focus, Skip and Procs are the run's selection and parallelism; Skip
	// without the not-applicable specs. Fast says the focus is FastFocus.
	Fast        bool
	Focus, Skip string
	Procs       int
	// Selected are the specs focus and skip select (a dry run).
	Selected []string
	// NotApplicable maps each entry to the selected specs it left out;
	// Images are the images the suite names that are not built here.
	NotApplicable map[NotApplicable][]string
	Images        []Unavailable
	// Specs are the JUnit report of the run.
	Specs []Spec
}

// Partial reports whether the run covered less than the node conformance
// suite.
func (r Run) Partial() bool { return r.Focus != DefaultFocus || r.Skip != BaseSkip }

// Region is the name of the part of CONFORMANCE.md the run writes: a
// partial run never replaces the figures of a full one, nor of the last
// run of the fast subset.
func (r Run) Region() string {
	switch {
	case r.Fast:
		return "fast-run"
	case r.Partial():
		return "partial-run"
	}
	return "full-run"
}

// counts returns the specs (not suite nodes) by outcome; skipped holds the
// specs skipped while running (ginkgo's filter skips are not in it).
func (r Run) counts() (passed, failed, skipped, suite []Spec) {
	for _, s := range r.Specs {
		switch {
		case !strings.HasPrefix(s.Name, "[It] "):
			if s.Failed() {
				suite = append(suite, s)
			}
		case s.Status == "passed":
			passed = append(passed, s)
		case s.Failed():
			failed = append(failed, s)
		case s.Status == "skipped" && s.SkipReason != "":
			skipped = append(skipped, s)
		}
	}
	return passed, failed, skipped, suite
}

// Verdict is nil when every selected spec that ran passed and as many
// passed as were selected less the not-applicable ones; otherwise it says
// what failed or did not run. A fixed subset (make test) is judged by it.
func (r Run) Verdict() error {
	passed, failed, _, suite := r.counts()
	var names []string
	for _, s := range slices.Concat(suite, failed) {
		names = append(names, s.Name)
	}
	var na int
	for _, specs := range r.NotApplicable {
		na += len(specs)
	}
	switch want := len(r.Selected) - na; {
	case len(names) > 0:
		return fmt.Errorf("%d of %d specs failed: %s", len(names), want, strings.Join(names, "; "))
	case len(passed) != want:
		return fmt.Errorf("%d of %d specs passed, the rest did not run", len(passed), want)
	}
	return nil
}

// Markdown renders the run.
func (r Run) Markdown() string {
	passed, failed, skipped, suite := r.counts()
	var na int
	for _, specs := range r.NotApplicable {
		na += len(specs)
	}
	var b strings.Builder
	if r.Fast {
		fmt.Fprintf(&b, "## Fast subset (not the full suite)\n\n")
		fmt.Fprintf(&b, "The fixed subset of test/conformance.FastSpecs: these figures do not cover the node conformance suite.\n\n")
	} else if r.Partial() {
		fmt.Fprintf(&b, "## Partial run (not the full suite)\n\n")
		fmt.Fprintf(&b, "FOCUS or SKIP was overridden: these figures cover the specs selected below, not the node conformance suite.\n\n")
	} else {
		fmt.Fprintf(&b, "## Full run\n\n")
	}
	fmt.Fprintf(&b, "- commit: %s\n", r.Commit)
	fmt.Fprintf(&b, "- date: %s, ginkgo ran %s\n", r.Start.UTC().Format("2006-01-02 15:04 MST"), r.Duration.Round(time.Second))
	fmt.Fprintf(&b, "- machine: %d CPUs; load average (1, 5, 15 min) %s before, %s after\n", r.CPUs, r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&b, "- selection: focus `%s`, skip `%s`, %d ginkgo processes\n", r.Focus, r.Skip, r.Procs)
	fmt.Fprintf(&b, "- **%d selected: %d passed, %d failed, %d not applicable, %d skipped by the spec itself**\n",
		len(r.Selected), len(passed), len(failed), na, len(skipped))
	if ran := len(passed) + len(failed) + len(skipped) + na; ran != len(r.Selected) {
		fmt.Fprintf(&b, "- %d selected specs have no outcome (the run stopped early)\n", len(r.Selected)-ran)
	}
	if len(suite) > 0 {
		fmt.Fprintf(&b, "\n### Suite nodes that failed\n\n")
		for _, s := range suite {
			fmt.Fprintf(&b, "- `%s` (%s): %s%s\n", s.Name, s.Status, s.Failure, where(s))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "\n### Failed\n\n")
		for _, s := range sorted(failed) {
			fmt.Fprintf(&b, "- `%s` (%s, %.0f s): %s%s\n", strings.TrimPrefix(s.Name, "[It] "), s.Status, s.Seconds, s.Failure, where(s))
		}
	}
	fmt.Fprintf(&b, "\n### Not applicable\n\n")
	if len(r.Images) > 0 {
		fmt.Fprintf(&b, "Images the suite names that are not built here (a spec using one is listed below when it is selected):\n\n")
		for _, u := range r.Images {
			fmt.Fprintf(&b, "- `%s`: %s\n", u.Name, u.Reason)
		}
		fmt.Fprintln(&b)
	}
	entries := make([]NotApplicable, 0, len(r.NotApplicable))
	for n := range r.NotApplicable {
		entries = append(entries, n)
	}
	slices.SortFunc(entries, func(a, b NotApplicable) int { return strings.Compare(a.Spec, b.Spec) })
	for _, n := range entries {
		for _, s := range r.NotApplicable[n] {
			fmt.Fprintf(&b, "- `%s`: %s\n", s, n.Reason)
		}
	}
	if na == 0 {
		fmt.Fprintf(&b, "No selected spec is not applicable.\n")
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "\n### Skipped by the spec itself\n\n")
		for _, s := range sorted(skipped) {
			fmt.Fprintf(&b, "- `%s`: %s\n", strings.TrimPrefix(s.Name, "[It] "), s.SkipReason)
		}
	}
	if r.Partial() && len(passed) > 0 {
		fmt.Fprintf(&b, "\n### Passed\n\n")
		for _, s := range sorted(passed) {
			fmt.Fprintf(&b, "- `%s` (%.0f s)\n", strings.TrimPrefix(s.Name, "[It] "), s.Seconds)
		}
	}
	return b.String()
}

func where(s Spec) string {
	if s.Location == "" {
		return ""
	}
	return " (" + s.Location + ")"
}

func sorted(specs []Spec) []Spec {
	specs = slices.Clone(specs)
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	return specs
}

// WriteRegion replaces the region named name of the markdown file path
// (between "<!-- name:begin -->" and "<!-- name:end -->") with text, or
// appends the region when the file has none. The rest of the file, the
// analysis written by hand, is kept. A missing file is created.
func WriteRegion(path, name, text string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	begin, end := []byte("<!-- "+name+":begin -->\n"), []byte("<!-- "+name+":end -->\n")
	region := slices.Concat(begin, []byte(strings.TrimRight(text, "\n")+"\n"), end)
	var out []byte
	i, j := bytes.Index(old, begin), bytes.Index(old, end)
	switch {
	case i >= 0 && j > i:
		out = slices.Concat(old[:i], region, old[j+len(end):])
	case i >= 0 || j >= 0:
		return fmt.Errorf("%s: the region %s has only one of its two markers", path, name)
	default:
		out = old
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			out = append(bytes.TrimRight(out, "\n"), "\n\n"...)
		}
		out = append(out, region...)
	}
	return os.WriteFile(path, out, 0o644)
}
