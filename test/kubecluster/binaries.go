package kubecluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The versions hack/kube-binaries.sh builds by default.
const (
	KubeVersion = "v1.37.2"
	EtcdVersion = "v3.7.3"
)

// Binaries are the paths of the control plane's programs. The controller
// manager and the scheduler are only needed when Options ask for them.
type Binaries struct {
	APIServer, Kubectl, Etcd     string
	ControllerManager, Scheduler string
	// MetricsServer is hack/metrics-server.sh's build, only needed when
	// Options ask for it.
	MetricsServer string
}

// FindBinaries looks for the binaries where hack/kube-binaries.sh puts them:
// under $PODHOST_KUBE_CACHE, else $HOME/.cache/podhost, in kube-VERSION and
// etcd-VERSION. A missing one is an error that names the command to run.
func FindBinaries() (Binaries, error) {
	cache := os.Getenv("PODHOST_KUBE_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return Binaries{}, fmt.Errorf("finding the kube binaries: no $PODHOST_KUBE_CACHE and no home directory: %v", err)
		}
		cache = filepath.Join(home, ".cache", "podhost")
	}
	b := Binaries{
		APIServer: filepath.Join(cache, "kube-"+KubeVersion, "kube-apiserver"),
		Kubectl:   filepath.Join(cache, "kube-"+KubeVersion, "kubectl"),
		Etcd:      filepath.Join(cache, "etcd-"+EtcdVersion, "etcd"),
		// Only needed when Options ask for them (checkComponents).
		ControllerManager: filepath.Join(cache, "kube-"+KubeVersion, "kube-controller-manager"),
		Scheduler:         filepath.Join(cache, "kube-"+KubeVersion, "kube-scheduler"),
		MetricsServer:     filepath.Join(cache, "metrics-server-"+MetricsServerVersion, "metrics-server"),
	}
	if err := checkExecutables("sh hack/kube-binaries.sh (make kube-binaries)", b.APIServer, b.Kubectl, b.Etcd); err != nil {
		return b, err
	}
	return b, nil
}

// checkExecutables returns an error naming every path that is not an
// executable file, and the command that builds them.
func checkExecutables(build string, paths ...string) error {
	var missing []error
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, fmt.Errorf("%s is missing or not executable", p))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w; build them with: %s", errors.Join(missing...), build)
	}
	return nil
}
