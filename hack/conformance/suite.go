package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podhost/podhost/test/conformance"
	"github.com/podhost/podhost/test/kubecluster"
)

// suiteBinaries are the programs hack/e2e-binaries.sh builds.
type suiteBinaries struct {
	dir                      string
	e2eTest, ginkgo, kubectl string
}

func findSuite(dir string) (suiteBinaries, error) {
	s := suiteBinaries{dir: dir,
		e2eTest: filepath.Join(dir, "e2e.test"), ginkgo: filepath.Join(dir, "ginkgo"), kubectl: filepath.Join(dir, "kubectl"),
	}
	src := conformance.SourcesIn(dir)
	var missing []string
	for _, p := range []string{s.e2eTest, s.ginkgo, src.Agnhost, src.Nonewprivs, filepath.Join(src.AgnhostFiles, "localhost.key"), src.Busybox, src.GlibcDNSTesting} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return s, fmt.Errorf("missing %s; build them with: sh hack/e2e-binaries.sh (make e2e-binaries)", strings.Join(missing, ", "))
	}
	return s, nil
}

// dryRun lists the specs focus and skip select, without running them.
func (s suiteBinaries) dryRun(ctx context.Context, runDir, kubeconfig, focus, skip string) ([]string, error) {
	report := filepath.Join(runDir, "dry-run.xml")
	cmd := exec.CommandContext(ctx, s.e2eTest, "--ginkgo.dry-run", "--ginkgo.focus="+focus, "--ginkgo.skip="+skip,
		"--ginkgo.junit-report="+report, "--provider=skeleton", "--kubeconfig="+kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("e2e.test --ginkgo.dry-run: %w\n%s", err, tail(out.String(), 30))
	}
	specs, err := conformance.ReadJUnit(report)
	if err != nil {
		return nil, err
	}
	var selected []string
	for _, sp := range specs {
		if name, ok := strings.CutPrefix(sp.Name, "[It] "); ok && sp.Status == "passed" {
			selected = append(selected, name)
		}
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("focus %q and skip %q select no spec", focus, skip)
	}
	return selected, nil
}

// run runs ginkgo over e2e.test and returns the path of its JUnit report
// (empty when ginkgo wrote none), with ginkgo's error: a failed spec makes
// it exit non-zero. Its output goes to ginkgo.log and to standard output.
func (s suiteBinaries) run(ctx context.Context, runDir string, c *kubecluster.Cluster, focus, skip string, procs int, timeout time.Duration) (string, error) {
	log, err := os.Create(filepath.Join(runDir, "ginkgo.log"))
	if err != nil {
		return "", err
	}
	defer log.Close()
	args := []string{
		"--procs=" + strconv.Itoa(procs), "--timeout=" + timeout.String(), "--no-color",
		"--focus=" + focus, "--skip=" + skip,
		"--junit-report=junit.xml", "--output-dir=" + runDir,
		s.e2eTest, "--",
		"--provider=skeleton", "--kubeconfig=" + c.AdminKubeconfig, "--kubectl-path=" + s.kubectl,
		"--report-dir=" + runDir, "--disable-log-dump", "--dump-logs-on-failure=false",
	}
	cmd := exec.CommandContext(ctx, s.ginkgo, args...)
	cmd.Dir = runDir
	cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stdout, log), io.MultiWriter(os.Stderr, log)
	// An interrupt lets ginkgo clean up and write its report.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 2 * time.Minute
	logf("ginkgo %s", strings.Join(args, " "))
	runErr := cmd.Run()
	junit := filepath.Join(runDir, "junit.xml")
	if _, err := os.Stat(junit); err != nil {
		return "", errors.Join(fmt.Errorf("ginkgo wrote no JUnit report: %w", err), runErr)
	}
	return junit, runErr
}

// gitCommit is HEAD's short hash, with "+dirty" when the worktree has
// changes (other than CONFORMANCE.md, which a run writes).
func gitCommit(ctx context.Context) (string, error) {
	head, err := exec.CommandContext(ctx, "git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	commit := strings.TrimSpace(string(head))
	status, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!CONFORMANCE.md").Output()
	if err != nil {
		return "", fmt.Errorf("git status: %w", err)
	}
	if len(bytes.TrimSpace(status)) > 0 {
		commit += "+dirty"
	}
	return commit, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
