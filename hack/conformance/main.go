// Command conformance runs the upstream Kubernetes node conformance suite
// against one podhost node and writes its figures into CONFORMANCE.md
// (`make conformance`, as root, from the repository root):
//
//	conformance [-focus RE | -fast] [-skip RE] [-procs N] [-timeout D] [-strict] [-out CONFORMANCE.md] [-dir build/conformance]
//
// It expects the binaries of hack/kube-binaries.sh, hack/e2e-binaries.sh
// and hack/cni-plugins.sh in their cache and podhost's in bin/ (make
// build). It builds the images `e2e.test --list-images` names
// (test/conformance), starts a private containerd with a pod network and
// imports them, starts etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, and one podhost node in Kubernetes mode; then it runs
// `ginkgo -p` over e2e.test with --provider=skeleton and a JUnit report,
// leaving out the not-applicable specs, and writes the run into its
// region of the output file (a partial run, with FOCUS or SKIP changed,
// into its own). Logs, the JUnit report and the node's files stay under
// -dir, in a directory per run.
//
// Not part of `make test` or CI: the whole suite takes hours here.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/podhost/podhost/test/conformance"
	"github.com/podhost/podhost/test/crisetup"
	"github.com/podhost/podhost/test/kubecluster"
)

// nodeName is the podhost node's name in the cluster.
const nodeName = "podhost-node"

type config struct {
	fast        bool
	strict      bool
	focus, skip string
	procs       int
	timeout     time.Duration
	out, dir    string
	bin         string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.focus, "focus", conformance.DefaultFocus, "ginkgo focus `regexp`")
	flag.BoolVar(&cfg.fast, "fast", false, "run the fixed fast subset (test/conformance.FastSpecs) instead of -focus")
	flag.StringVar(&cfg.skip, "skip", conformance.BaseSkip, "ginkgo skip `regexp` (the not-applicable specs are always added)")
	flag.IntVar(&cfg.procs, "procs", 4, "ginkgo processes")
	flag.DurationVar(&cfg.timeout, "timeout", 24*time.Hour, "ginkgo's suite `timeout`: the run then stops its specs and still writes its report (the specs not run are counted as without outcome); an interrupt after ginkgo's grace may leave none")
	flag.StringVar(&cfg.out, "out", "CONFORMANCE.md", "`file` to write the run's figures into")
	flag.StringVar(&cfg.dir, "dir", "build/conformance", "`dir` for the runs' logs and reports")
	flag.StringVar(&cfg.bin, "bin", "bin", "`dir` of podhost and its plugins (make build)")
	flag.BoolVar(&cfg.strict, "strict", false, "exit non-zero unless every selected spec passed (not-applicable ones aside): the fast subset in make test")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) (err error) {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (a private containerd and a node)")
	}
	if cfg.fast {
		if cfg.focus, err = conformance.FastFocus(); err != nil {
			return err
		}
	}
	bins, err := kubecluster.FindBinaries()
	if err != nil {
		return err
	}
	suite, err := findSuite(filepath.Dir(bins.APIServer))
	if err != nil {
		return err
	}
	runDir, err := filepath.Abs(filepath.Join(cfg.dir, time.Now().UTC().Format("20060102-150405")))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return err
	}
	logf("run directory %s", runDir)
	commit, err := gitCommit(ctx)
	if err != nil {
		return err
	}

	names, err := conformance.ListImages(ctx, suite.e2eTest)
	if err != nil {
		return err
	}
	images, unavailable, err := conformance.WriteImages(ctx, filepath.Join(runDir, "images"), names, conformance.SourcesIn(suite.dir))
	if err != nil {
		return err
	}

	// A short directory: containerd's socket path must fit sun_path.
	ctrdDir, err := os.MkdirTemp("", "phconf-")
	if err != nil {
		return err
	}
	logf("starting a private containerd with a pod network in %s", ctrdDir)
	ctrd, err := crisetup.Start(ctx, ctrdDir, crisetup.WithPodNetwork())
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping containerd")
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if stopErr := ctrd.Stop(stopCtx); stopErr != nil {
			logf("stopping containerd: %v", stopErr)
		}
		_ = os.RemoveAll(ctrdDir)
	}()
	for _, img := range images {
		if err := ctrd.Import(ctx, img.Path, img.Name); err != nil {
			return err
		}
	}
	logf("imported %d images; %d named by the suite are not built here", len(images), len(unavailable))

	logf("starting etcd, kube-apiserver, kube-controller-manager and kube-scheduler")
	cluster, err := kubecluster.Start(ctx, filepath.Join(runDir, "cluster"), kubecluster.Options{
		Nodes: []string{nodeName}, ControllerManager: true, Scheduler: true,
	})
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping the control plane")
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if stopErr := cluster.Stop(stopCtx); stopErr != nil {
			logf("stopping the control plane: %v", stopErr)
		}
	}()

	node, err := startNode(ctx, cfg.bin, filepath.Join(runDir, "node"), cluster, ctrd)
	if err != nil {
		return err
	}
	defer node.stop()
	if err := node.waitReady(ctx, cluster, 2*time.Minute); err != nil {
		return err
	}

	selected, err := suite.dryRun(ctx, runDir, cluster.AdminKubeconfig, cfg.focus, cfg.skip)
	if err != nil {
		return err
	}
	na, err := conformance.Classify(selected, conformance.NotApplicableSpecs)
	if err != nil {
		return err
	}
	for n, specs := range na {
		if len(specs) == 0 && cfg.focus == conformance.DefaultFocus {
			return fmt.Errorf("the not-applicable entry %q matches no spec of the suite: renamed upstream? fix test/conformance", n.Spec)
		}
	}
	logf("%d specs selected", len(selected))

	r := conformance.Run{
		Commit: commit, Start: time.Now(), Fast: cfg.fast, CPUs: runtime.NumCPU(), LoadBefore: loadAverage(),
		Focus: cfg.focus, Skip: cfg.skip, Procs: cfg.procs, Selected: selected, NotApplicable: na, Images: unavailable,
	}
	junit, runErr := suite.run(ctx, runDir, cluster, cfg.focus, conformance.SkipPattern(cfg.skip, conformance.NotApplicableSpecs), cfg.procs, cfg.timeout)
	r.Duration, r.LoadAfter = time.Since(r.Start), loadAverage()
	if runErr != nil && junit == "" {
		return runErr
	}
	if r.Specs, err = conformance.ReadJUnit(junit); err != nil {
		return fmt.Errorf("%w (ginkgo: %v)", err, runErr)
	}
	if err := conformance.WriteRegion(cfg.out, r.Region(), r.Markdown()); err != nil {
		return err
	}
	logf("wrote the %s figures into %s; JUnit report %s", r.Region(), cfg.out, junit)
	if cfg.strict {
		return r.Verdict()
	}
	// ginkgo exits non-zero when a spec failed: that is a result, recorded
	// above, not an error of this command.
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "conformance: %s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
