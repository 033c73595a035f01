package scsitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Rule makes a fake tool's call whose arguments start with Args exit with
// Exit and print Output, Times times (0 = always), instead of acting.
type Rule struct {
	Tool   string   `json:"tool"`
	Args   []string `json:"args"`
	Exit   int      `json:"exit"`
	Output string   `json:"output,omitempty"`
	Times  int      `json:"times,omitempty"`
}

func (f *Fake) rulesFile() string { return filepath.Join(f.Bin, "rules.json") }
func (f *Fake) logFile() string   { return filepath.Join(f.Bin, "calls.log") }

// AddRule adds a rule for the fake tools.
func (f *Fake) AddRule(r Rule) {
	f.t.Helper()
	rules := readRules(f.rulesFile())
	rules = append(rules, r)
	if err := writeRules(f.rulesFile(), rules); err != nil {
		f.t.Fatal(err)
	}
}

// ClearRules drops the rules of the fake tool.
func (f *Fake) ClearRules(tool string) {
	f.t.Helper()
	rules := slices.DeleteFunc(readRules(f.rulesFile()), func(r Rule) bool { return r.Tool == tool })
	if err := writeRules(f.rulesFile(), rules); err != nil {
		f.t.Fatal(err)
	}
}

// Calls returns the argument lists the fake tool was called with, in order.
func (f *Fake) Calls(tool string) [][]string {
	b, _ := os.ReadFile(f.logFile())
	var calls [][]string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) > 0 && fields[0] == tool {
			calls = append(calls, fields[1:])
		}
	}
	return calls
}

func readRules(path string) []Rule {
	var rules []Rule
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &rules)
	}
	return rules
}

func writeRules(path string, rules []Rule) error {
	b, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Main runs the fake tool when the test binary was started as one, and
// returns otherwise. Call it first in TestMain.
func Main() {
	tool := filepath.Base(os.Args[0])
	if tool != "multipath" && tool != "iscsiadm" {
		// The fakes are this binary started again. Built with -race, each
		// would wait a second at exit (the race runtime's atexit_sleep_ms,
		// time for other goroutines to report, of which a fake has none):
		// a minute over a scenario table. They inherit this setting.
		_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
		return
	}
	root := filepath.Dir(filepath.Dir(os.Args[0]))
	code, out := runTool(root, tool, os.Args[1:])
	fmt.Print(out)
	os.Exit(code)
}

// runTool records the call, applies the first matching rule, else acts.
func runTool(root, tool string, args []string) (int, string) {
	f := &Fake{Root: root, Tree: treeAt(root), Bin: filepath.Join(root, "bin")}
	log, err := os.OpenFile(f.logFile(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 99, err.Error()
	}
	fmt.Fprintln(log, strings.Join(append([]string{tool}, args...), "\t"))
	_ = log.Close()
	rules := readRules(f.rulesFile())
	for i, r := range rules {
		if r.Tool != tool || len(args) < len(r.Args) || !slices.Equal(args[:len(r.Args)], r.Args) {
			continue
		}
		if r.Times > 0 {
			if rules[i].Times--; rules[i].Times == 0 {
				rules = slices.Delete(rules, i, i+1)
			}
			_ = writeRules(f.rulesFile(), rules)
		}
		return r.Exit, r.Output
	}
	switch tool {
	case "multipath":
		return multipath(f, args)
	default:
		return iscsiadm(f, args)
	}
}

// multipath -f <dev>: the device-mapper device disappears (a misuse is
// noted when it is still mounted).
func multipath(f *Fake, args []string) (int, string) {
	if len(args) != 2 || args[0] != "-f" {
		return 1, fmt.Sprintf("fake multipath: unsupported arguments %q\n", args)
	}
	t := f.Tree
	name := filepath.Base(args[1])
	if _, err := os.Lstat(filepath.Join(t.Sys, "block", name)); err != nil {
		return 1, fmt.Sprintf("%s: no such map\n", name)
	}
	if at := mountedAt(t.DevPath(name)); len(at) > 0 {
		f.noteMisuse("multipath -f %s while it is mounted at %s", name, strings.Join(at, ","))
	}
	_ = os.RemoveAll(filepath.Join(t.Sys, "block", name))
	_ = os.Remove(t.DevPath(name))
	return 0, ""
}
