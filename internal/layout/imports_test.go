package layout

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// mayImport says which parts of the repository each part's code may
// import, besides its own part. A part is a folder of the module; a package
// belongs to the longest part its path starts with (host/node/… is part
// "host/node", host/state is part "host"). Part A is above part B when A
// may import B, directly or through parts it may import; the table is
// acyclic (TestLayersHaveNoCycle), so "above" is an order. A package never
// imports one above it nor one beside it (a part that is neither above nor
// below). From the bottom:
//
//   - proto/, images/, internal/, deploy/, lifecycle/ and sources/ import
//     nothing of the module: the generated contract, leaf libraries, and
//     the deterministic core, which knows nothing of plugins or the host;
//   - pluginapi/ is the go-plugin wiring of proto/ that both sides share;
//   - sdk/ is the plugin side's library; plugins/ and examples/ are what a
//     plugin author writes, so they import sdk/ and proto/ only (sdk
//     re-exports what they need of pluginapi/);
//   - host/ is the host side: it adapts plugins to the lifecycle core and
//     never imports sdk/, plugins/ or examples/; host/node, the running
//     agent, wires the other host packages, and none of them imports it;
//   - cmd/ is the binary over host/;
//   - bench/, hack/ and test/ are programs and tests around the product;
//     test/crisetup (a private containerd) serves the other two and the
//     plugins' tests (it shares sdk/cgroupdir with the runtime plugin), and test/kubecluster (a real etcd and kube-apiserver)
//     serves test/e2e and bench/, but no product code, nor does
//     test/criproxy (a counting, fault-injecting proxy in front of
//     containerd's socket); test/conformance (the upstream node conformance
//     suite's images, selection and report) serves hack/conformance and
//     hack/mkimage, which also start a control plane with test/kubecluster
//     (its tests find the binary cache through test/kubecluster).
var mayImport = map[string][]string{
	"proto":     nil,
	"images":    nil,
	"internal":  nil,
	"deploy":    nil,
	"lifecycle": nil,
	"sources":   nil,
	"pluginapi": {"proto"},
	"sdk":       {"pluginapi", "proto"},
	"plugins":   {"sdk", "proto"},
	"examples":  {"sdk", "proto"},
	"host":      {"lifecycle", "sources", "pluginapi", "proto"},
	"host/node": {"host", "lifecycle", "sources", "pluginapi", "proto"},
	"cmd":       {"host/node", "host", "lifecycle", "sources", "pluginapi", "proto"},

	"test/crisetup":    {"images", "sdk"},
	"test/kubecluster": nil,
	"test/criproxy":    nil,
	"test/conformance": {"images", "test/kubecluster"},
	"bench":            {"host", "images", "test/crisetup", "test/kubecluster", "test/criproxy"},
	"hack":             {"images", "test/crisetup", "test/kubecluster", "test/conformance"},
	"test/e2e":         {"host", "images", "test/crisetup", "test/kubecluster", "test/criproxy"},
}

// testsMayImport adds what a part's tests (its _test.go files) may import
// beyond mayImport. Tests may reach further: the host's tests serve real
// plugins inside the test binary with sdk.Serve, a fake passes the
// runtime conformance kit, and a plugin's tests start a real containerd.
var testsMayImport = map[string][]string{
	"host":      {"sdk", "internal", "test/kubecluster"},
	"host/node": {"sdk", "internal"},
	"cmd":       {"sdk", "internal"},
	"plugins":   {"images", "test/crisetup", "test/criproxy", "internal"},
	"examples":  {"internal"},
	"test/e2e":  {"internal", "lifecycle"},
}

// partOf is the part a module-relative package path belongs to: the
// longest key of mayImport that is the path or a folder above it.
func partOf(path string) (string, bool) {
	best := ""
	for part := range mayImport {
		if (path == part || strings.HasPrefix(path, part+"/")) && len(part) > len(best) {
			best = part
		}
	}
	return best, best != ""
}

// importProblems returns, for one package, every import of the module
// that its part may not make: imports from non-test files checked against
// mayImport, imports from test files against mayImport and testsMayImport.
func importProblems(p pkg) []string {
	path, _ := rel(p.ImportPath)
	part, ok := partOf(path)
	if !ok {
		return []string{fmt.Sprintf("%s is in no part of the layout: add its folder to mayImport (and to README's layout table)", path)}
	}
	allowed := map[string]bool{part: true}
	for _, q := range mayImport[part] {
		allowed[q] = true
	}
	forTests := maps.Clone(allowed)
	for _, q := range testsMayImport[part] {
		forTests[q] = true
	}
	var problems []string
	check := func(imports []string, allowed map[string]bool, what string) {
		for _, imp := range imports {
			ip, inModule := rel(imp)
			if !inModule {
				continue
			}
			to, ok := partOf(ip)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s %s %s, which is in no part of the layout", path, what, ip))
			} else if !allowed[to] {
				problems = append(problems, fmt.Sprintf("%s (part %s) %s %s (part %s)", path, part, what, ip, to))
			}
		}
	}
	check(p.Imports, allowed, "imports")
	check(slices.Concat(p.TestImports, p.XTestImports), forTests, "has a test that imports")
	return problems
}

// TestNoPackageImportsOneAbove checks every package of the module against
// the layout.
func TestNoPackageImportsOneAbove(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, problem := range importProblems(p) {
			t.Error(problem)
		}
	}
}

// TestImportRules shows that the rules catch what they are for.
func TestImportRules(t *testing.T) {
	tests := []struct {
		name string
		p    pkg
		want string // substring of the one problem; empty for none
	}{
		{"host imports the core", pkg{ImportPath: module + "/host/runtimemanager", Imports: []string{module + "/lifecycle", module + "/host/supervisor", "google.golang.org/grpc"}}, ""},
		{"host imports the sdk", pkg{ImportPath: module + "/host/runtimemanager/runtimetestfake", Imports: []string{module + "/sdk"}}, "imports sdk (part sdk)"},
		{"a host test imports the sdk", pkg{ImportPath: module + "/host/supervisor", TestImports: []string{module + "/sdk"}}, ""},
		{"host imports the agent", pkg{ImportPath: module + "/host/state", Imports: []string{module + "/host/node"}}, "(part host/node)"},
		{"the agent imports host", pkg{ImportPath: module + "/host/node", Imports: []string{module + "/host/state"}}, ""},
		{"lifecycle imports host", pkg{ImportPath: module + "/lifecycle", Imports: []string{module + "/host/events"}}, "(part host)"},
		{"a lifecycle test imports a plugin", pkg{ImportPath: module + "/lifecycle/lifecycletest", XTestImports: []string{module + "/plugins/runtime-containerd"}}, "has a test that imports"},
		{"a plugin imports pluginapi", pkg{ImportPath: module + "/plugins/volume-csi", Imports: []string{module + "/pluginapi"}}, "(part pluginapi)"},
		{"an example imports host", pkg{ImportPath: module + "/examples/runtime-memory", Imports: []string{module + "/host/config"}}, "(part host)"},
		{"sdk imports host", pkg{ImportPath: module + "/sdk", Imports: []string{module + "/host/supervisor"}}, "(part host)"},
		{"host imports cmd", pkg{ImportPath: module + "/host/node", Imports: []string{module + "/cmd/host"}}, "(part cmd)"},
		{"product code imports test setup", pkg{ImportPath: module + "/host/node", Imports: []string{module + "/test/crisetup"}}, "(part test/crisetup)"},
		{"a new top-level folder", pkg{ImportPath: module + "/util"}, "in no part of the layout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := importProblems(tt.p)
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("problems %q, want none", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Errorf("problems %q, want one containing %q", got, tt.want)
			}
		})
	}
}

// TestLayersHaveNoCycle checks that "above" is an order: no part may
// import, through the parts it may import, itself. Test imports count
// too, since a cycle through tests still ties two parts together.
func TestLayersHaveNoCycle(t *testing.T) {
	edges := map[string][]string{}
	for part, to := range mayImport {
		edges[part] = slices.Concat(to, testsMayImport[part])
		for _, q := range edges[part] {
			if _, ok := mayImport[q]; !ok {
				t.Errorf("part %s may import %s, which is not a part", part, q)
			}
		}
	}
	for part := range testsMayImport {
		if _, ok := mayImport[part]; !ok {
			t.Errorf("testsMayImport names %s, which is not a part", part)
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var visit func(part string, path []string)
	visit = func(part string, path []string) {
		switch state[part] {
		case onPath:
			t.Errorf("the layout has a cycle: %s", strings.Join(append(path, part), " → "))
			return
		case done:
			return
		}
		state[part] = onPath
		for _, q := range edges[part] {
			visit(q, append(path, part))
		}
		state[part] = done
	}
	for _, part := range slices.Sorted(maps.Keys(edges)) {
		visit(part, nil)
	}
}

// isTestSupport reports whether a package exists for tests: its name ends
// in "test" (lifecycletest, localapitest, runtimetest, …), "testfake" or
// "testutil".
func isTestSupport(p pkg) bool {
	return p.Name != "main" && (strings.HasSuffix(p.Name, "test") || strings.HasSuffix(p.Name, "testfake") || strings.HasSuffix(p.Name, "testutil"))
}

// isTestProgram reports whether p is a command inside a test-support
// package's folder (plugins/internal/scsitest/scsifake): a program that
// tests build and run, never shipped.
func isTestProgram(p pkg, support map[string]bool) bool {
	if p.Name != "main" {
		return false
	}
	for s := range support {
		if strings.HasPrefix(p.ImportPath, s+"/") {
			return true
		}
	}
	return false
}

// testSupportProblems returns every non-test import of a test-support
// package by a package that is not one itself.
func testSupportProblems(pkgs []pkg) []string {
	support := map[string]bool{}
	for _, p := range pkgs {
		if isTestSupport(p) {
			support[p.ImportPath] = true
		}
	}
	var problems []string
	for _, p := range pkgs {
		if support[p.ImportPath] || isTestProgram(p, support) {
			continue
		}
		for _, imp := range p.Imports {
			if support[imp] {
				from, _ := rel(p.ImportPath)
				to, _ := rel(imp)
				problems = append(problems, fmt.Sprintf("%s imports %s, which is for tests: import it from a _test.go file", from, to))
			}
		}
	}
	return problems
}

// TestTestSupportOnlyFromTests keeps fakes and conformance kits out of
// the binaries: only test files, and other packages made for tests,
// import them.
func TestTestSupportOnlyFromTests(t *testing.T) {
	pkgs := listPackages(t)
	n := 0
	for _, p := range pkgs {
		if isTestSupport(p) {
			n++
		}
	}
	if n < 5 {
		t.Fatalf("found only %d packages made for tests", n)
	}
	for _, problem := range testSupportProblems(pkgs) {
		t.Error(problem)
	}
}

func TestTestSupportRule(t *testing.T) {
	fake := pkg{ImportPath: module + "/host/runtimemanager/runtimetestfake", Name: "runtimetestfake"}
	kit := pkg{ImportPath: module + "/sdk/runtimetest", Name: "runtimetest", Imports: []string{fake.ImportPath}}
	tests := []struct {
		name string
		p    pkg
		want int
	}{
		{"product code imports a fake", pkg{ImportPath: module + "/host/node", Name: "node", Imports: []string{fake.ImportPath}}, 1},
		{"a test imports a fake", pkg{ImportPath: module + "/host/node", Name: "node", TestImports: []string{fake.ImportPath}}, 0},
		{"a command imports a kit", pkg{ImportPath: module + "/plugins/volume-csi", Name: "main", Imports: []string{kit.ImportPath}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testSupportProblems([]pkg{fake, kit, tt.p}); len(got) != tt.want {
				t.Errorf("problems %q, want %d", got, tt.want)
			}
		})
	}
}
