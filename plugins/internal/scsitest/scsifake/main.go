// Command scsifake is scsitest's fake tree for tests outside plugins/
// (the end-to-end tests, which run the real plugin binaries): it builds
// a tree, declares iSCSI targets and FC disks over real loop devices,
// prints the fake tools' call log, and, started through the tree's
// iscsiadm and multipath links, is those tools.
//
//	scsifake init ROOT
//	scsifake iscsi-target ROOT PORTAL IQN LUN BACKING
//	scsifake fc-disk ROOT WWN LUN DISK BACKING
//	scsifake calls ROOT TOOL        (one call a line, arguments tab-separated;
//	                                 TOOL misuse: the calls made under a mount)
//	scsifake deleted ROOT DISK      (prints true once 1 was written to its delete)
//	scsifake fc-multipath ROOT WWN LUN DM BACKING DISK...
//	                                (DM over the DISKs, the LUN's link to the first)
//	scsifake rule ROOT TOOL EXIT TIMES OUTPUT [ARG...]   (see scsitest.Rule)
//	scsifake clear-rules ROOT TOOL
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/podhost/podhost/plugins/internal/scsitest"
)

// fatal reports setup failures on stderr and exits.
type fatal struct{}

func (fatal) Helper() {}
func (fatal) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"scsifake:"}, args...)...)
	os.Exit(1)
}

func main() {
	scsitest.Main()
	args := os.Args[1:]
	// The number of arguments of each command; negative: at least that.
	want := map[string]int{"init": 1, "iscsi-target": 5, "fc-disk": 5, "calls": 2, "deleted": 2, "fc-multipath": -6, "rule": -5, "clear-rules": 2}
	if len(args) == 0 || want[args[0]] == 0 || want[args[0]] > 0 && len(args)-1 != want[args[0]] || len(args)-1 < -want[args[0]] {
		fatal{}.Fatal("usage: scsifake init|iscsi-target|fc-disk|fc-multipath|rule|clear-rules|calls|deleted ROOT ... (see the package doc)")
	}
	a := args[1:]
	switch args[0] {
	case "init":
		self, err := os.Executable()
		if err != nil {
			fatal{}.Fatal(err)
		}
		scsitest.Build(fatal{}, a[0], self)
	case "iscsi-target":
		scsitest.Open(fatal{}, a[0]).AddTarget(scsitest.Target{Portal: a[1], IQN: a[2], LUNs: map[string]string{a[3]: a[4]}})
	case "fc-disk":
		f := scsitest.Open(fatal{}, a[0])
		f.AddDisk(a[3], a[4])
		f.AddFCLink(a[1], a[2], a[3])
	case "calls":
		for _, c := range scsitest.Open(fatal{}, a[0]).Calls(a[1]) {
			fmt.Println(strings.Join(c, "\t"))
		}
	case "deleted":
		fmt.Println(scsitest.Open(fatal{}, a[0]).Deleted(a[1]))
	case "fc-multipath":
		f := scsitest.Open(fatal{}, a[0])
		for _, d := range a[5:] {
			f.AddDisk(d, "")
		}
		f.AddMultipath(a[3], a[4], a[5:]...)
		f.AddFCLink(a[1], a[2], a[5])
	case "rule":
		exit, err1 := strconv.Atoi(a[2])
		times, err2 := strconv.Atoi(a[3])
		if err1 != nil || err2 != nil {
			fatal{}.Fatal("rule: EXIT and TIMES must be numbers")
		}
		scsitest.Open(fatal{}, a[0]).AddRule(scsitest.Rule{Tool: a[1], Exit: exit, Times: times, Output: a[4], Args: a[5:]})
	case "clear-rules":
		scsitest.Open(fatal{}, a[0]).ClearRules(a[1])
	}
}
