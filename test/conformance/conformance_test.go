package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/images/ociarchive"
)

func TestReadJUnit(t *testing.T) {
	specs, err := ReadJUnit("testdata/junit.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 6 {
		t.Fatalf("%d specs, want 6: %+v", len(specs), specs)
	}
	failed := specs[2]
	if !failed.Failed() || failed.Failure != "Timed out after 300.000s. Expected <bool>: false to be true" ||
		failed.Location != "k8s.io/kubernetes/test/e2e/common/node/downwardapi.go:107" {
		t.Errorf("failed spec read as %+v", failed)
	}
	if specs[3].Failed() || specs[3].SkipReason != "" {
		t.Errorf("a spec the focus left out read as %+v; want skipped without a reason", specs[3])
	}
	if specs[4].SkipReason != "Only supported for node OS distro [gci ubuntu]" {
		t.Errorf("a spec that skipped itself read as %+v", specs[4])
	}
	if _, err := parseJUnit([]byte(`<testsuites><testsuite><testcase name="x"></testcase></testsuite></testsuites>`)); err == nil {
		t.Error("a report without statuses was read; want an error")
	}
}

func TestRunMarkdownCountsAndMarksPartialRuns(t *testing.T) {
	specs, err := ReadJUnit("testdata/junit.xml")
	if err != nil {
		t.Fatal(err)
	}
	na := NotApplicable{Spec: "nginx spec", Reason: "needs nginx"}
	r := Run{
		Commit: "abc", Start: time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC), Duration: 5 * time.Minute, CPUs: 2,
		LoadBefore: "1 2 3", LoadAfter: "4 5 6", Focus: `Pods|Downward`, Skip: BaseSkip, Procs: 2,
		Selected:      []string{"a", "b", "c", "d", "e"},
		NotApplicable: map[NotApplicable][]string{na: {"[sig-node] Pods nginx spec"}},
		Images:        []Unavailable{{Name: "nginx:1", Reason: "not built"}},
		Specs:         specs,
	}
	md := r.Markdown()
	for _, want := range []string{
		"## Partial run (not the full suite)",
		"**5 selected: 1 passed, 1 failed, 1 not applicable, 1 skipped by the spec itself**",
		"- `[sig-node] Downward API should provide pod UID as env vars [NodeConformance] [Conformance]` (failed, 300 s): Timed out after 300.000s. Expected <bool>: false to be true (k8s.io/kubernetes/test/e2e/common/node/downwardapi.go:107)",
		"- `[sig-node] Pods nginx spec`: needs nginx",
		"- `nginx:1`: not built",
		"Only supported for node OS distro [gci ubuntu]",
		"### Passed",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if r.Region() != "partial-run" {
		t.Errorf("region %q for a focused run", r.Region())
	}
	r.Focus = DefaultFocus
	if md := r.Markdown(); r.Region() != "full-run" || strings.Contains(md, "Partial") || strings.Contains(md, "### Passed") {
		t.Errorf("the default selection is not a full run (region %q):\n%s", r.Region(), md)
	}
}

func TestWriteRegionKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "CONFORMANCE.md")
	if err := os.WriteFile(path, []byte("# Conformance\n\nanalysis by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ region, text string }{
		{"full-run", "full one"}, {"partial-run", "partial one"}, {"partial-run", "partial two"},
	} {
		if err := WriteRegion(path, step.region, step.text); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	want := "# Conformance\n\nanalysis by hand\n\n" +
		"<!-- full-run:begin -->\nfull one\n<!-- full-run:end -->\n\n" +
		"<!-- partial-run:begin -->\npartial two\n<!-- partial-run:end -->\n"
	if string(got) != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	if err := os.WriteFile(path, []byte("<!-- full-run:begin -->\nno end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteRegion(path, "full-run", "x"); err == nil {
		t.Error("a region with one marker was replaced; want an error")
	}
}

func TestSkipPatternAndClassify(t *testing.T) {
	specs := []string{
		"[sig-node] Pods should have their auto-restart back-off timer reset on image update [Slow] [NodeConformance]",
		"[sig-node] PrivilegedPod should enable privileged commands [LinuxOnly] [NodeConformance]",
		"[sig-node] Override hostname of Pod a pod with only hostnameOverride field will have hostnameOverride as hostname [NodeConformance]",
		"[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
	}
	got, err := Classify(specs, NotApplicableSpecs)
	if err != nil {
		t.Fatal(err)
	}
	var matched []string
	for _, s := range got {
		matched = append(matched, s...)
	}
	slices.Sort(matched)
	if want := []string{specs[0], specs[1]}; !slices.Equal(matched, want) {
		t.Errorf("not applicable: %q; want %q", matched, want)
	}
	if p := SkipPattern(BaseSkip, NotApplicableSpecs[:1]); p != BaseSkip+`|Pods should have their auto-restart back-off timer reset on image update` {
		t.Errorf("skip pattern %q", p)
	}
}

// TestPlanBuildsTheSuitesImages builds every image from stand-in binaries
// (busybox is static, which is all the images check) and reads each back
// from its archive.
func TestPlanBuildsTheSuitesImages(t *testing.T) {
	if err := localimages.CheckStatic(localimages.BusyboxPath); err != nil {
		t.Fatalf("needs Debian's busybox-static (hack/install-deps.sh): %v", err)
	}
	porter := t.TempDir()
	for _, f := range []string{"localhost.crt", "localhost.key"} {
		if err := os.WriteFile(filepath.Join(porter, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bb := localimages.BusyboxPath
	src := Sources{Busybox: bb, Pause: bb, Agnhost: bb, Nonewprivs: bb, AgnhostFiles: porter, Bash: bb, Curl: bb}
	names := []string{NonrootImage, "registry.k8s.io/e2e-test-images/nginx:1.27.0-2", AgnhostImage, BusyboxImage,
		"registry.k8s.io/e2e-test-images/agnhost:2.99", PauseImage, NonewprivsImage, AgnhostImage}
	images, missing, err := Plan(names, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 2 || missing[0].Name != "registry.k8s.io/e2e-test-images/agnhost:2.99" || missing[0].Reason != reasonUnknownImage ||
		!strings.Contains(missing[1].Reason, "nginx") {
		t.Errorf("unavailable %+v; want agnhost:2.99 (unknown) and nginx, in that order", missing)
	}
	dir := t.TempDir()
	got := map[string]*ociarchive.Archive{}
	for _, img := range images {
		path := filepath.Join(dir, "img.tar")
		if _, err := ociarchive.WriteFile(path, img); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ociarchive.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", img.Name, err)
		}
		got[r.Name] = r
	}
	if len(got) != 5 {
		t.Fatalf("built %d images, want 5", len(got))
	}
	entry := func(image, path string) *ociarchive.Entry {
		for i, e := range got[image].Entries {
			if e.Path == path {
				return &got[image].Entries[i]
			}
		}
		t.Errorf("%s has no %s", image, path)
		return &ociarchive.Entry{}
	}
	if e := entry(BusyboxImage, "bin/wget"); e.Type != ociarchive.TypeSymlink || e.Target != "busybox" {
		t.Errorf("busybox /bin/wget is %+v; want a link to busybox", e)
	}
	busybox, err := os.ReadFile(src.Busybox)
	if err != nil {
		t.Fatal(err)
	}
	for _, image := range []string{BusyboxImage, AgnhostImage, NonewprivsImage, NonrootImage} {
		if e := entry(image, "bin/busybox"); !bytes.Equal(e.Data, busybox) {
			t.Errorf("%s /bin/busybox is not Sources.Busybox", image)
		}
	}
	if c := got[AgnhostImage].Config; !slices.Equal(c.Entrypoint, []string{"/agnhost"}) || !slices.Equal(c.Cmd, []string{"pause"}) {
		t.Errorf("agnhost config %+v", c)
	}
	if e := entry(AgnhostImage, "agnhost-2"); e.Target != "agnhost" {
		t.Errorf("agnhost-2 is %+v", e)
	}
	if e := entry(AgnhostImage, "etc/group"); !strings.Contains(string(e.Data), "group-defined-in-image:x:50000:user-defined-in-image") {
		t.Errorf("agnhost /etc/group:\n%s", e.Data)
	}
	entry(AgnhostImage, "localhost.key")
	entry(AgnhostImage, "bin/bash")
	entry(AgnhostImage, "usr/bin/curl")
	if e := entry(NonewprivsImage, "usr/local/bin/nnp"); e.Mode&os.ModeSetuid == 0 {
		t.Errorf("nnp mode %v; want set-uid", e.Mode)
	}
	if u := got[NonrootImage].Config.User; u != "1234" {
		t.Errorf("nonroot user %q", u)
	}
	if c := got[PauseImage].Config; c.User != "65535:65535" || !slices.Equal(c.Entrypoint, []string{"/pause"}) {
		t.Errorf("pause config %+v", c)
	}
}

func TestFastFocusSelectsTheListedSpecs(t *testing.T) {
	saved := FastSpecs
	t.Cleanup(func() { FastSpecs = saved })
	FastSpecs = nil
	if _, err := FastFocus(); err == nil {
		t.Error("FastFocus with no specs listed; want an error")
	}
	FastSpecs = []string{"[sig-node] Pods should get a host IP [NodeConformance] [Conformance]", "[sig-storage] EmptyDir volumes"}
	focus, err := FastFocus()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(focus)
	for spec, want := range map[string]bool{
		"[sig-node] Pods should get a host IP [NodeConformance] [Conformance]":              true,
		"[sig-storage] EmptyDir volumes should support (root,0644,tmpfs) [NodeConformance]": true,
		"[sig-node] Pods should get a host IPv6 [NodeConformance]":                          false,
	} {
		if re.MatchString(spec) != want {
			t.Errorf("focus %q matches %q: %v, want %v", focus, spec, !want, want)
		}
	}
	if r := (Run{Fast: true, Focus: focus, Skip: BaseSkip}); r.Region() != "fast-run" {
		t.Errorf("region %q for the fast subset", r.Region())
	}
}

// The verdict of a strict run (the fast subset in make test): a failed
// spec names itself; a spec that did not pass (skipped while running, or
// never reached) fails it too; not-applicable specs do not count.
func TestRunVerdict(t *testing.T) {
	specs, err := ReadJUnit("testdata/junit.xml")
	if err != nil {
		t.Fatal(err)
	}
	na := NotApplicable{Spec: "nginx spec", Reason: "needs nginx"}
	r := Run{Selected: []string{"a", "b", "c", "d", "e"}, NotApplicable: map[NotApplicable][]string{na: {"x"}}, Specs: specs}
	if err := r.Verdict(); err == nil || !strings.Contains(err.Error(), "Downward API should provide pod UID as env vars") {
		t.Errorf("verdict of a run with a failure: %v", err)
	}
	var passed []Spec
	for _, s := range specs {
		if s.Status == "passed" && strings.HasPrefix(s.Name, "[It] ") {
			passed = append(passed, s)
		}
	}
	r = Run{Selected: []string{"a", "b"}, NotApplicable: map[NotApplicable][]string{na: {"b"}}, Specs: passed}
	if len(passed) != 1 {
		t.Fatalf("testdata has %d passed specs, want 1", len(passed))
	}
	if err := r.Verdict(); err != nil {
		t.Errorf("verdict of a run whose one applicable spec passed: %v", err)
	}
	r.Selected = append(r.Selected, "c")
	if err := r.Verdict(); err == nil || !strings.Contains(err.Error(), "1 of 2 specs passed") {
		t.Errorf("verdict of a run with a spec that never ran: %v", err)
	}
}
