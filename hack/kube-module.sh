# kube-module.sh is sourced by the scripts that build Kubernetes programs from
# the Go module proxy (hack/kube-binaries.sh, hack/e2e-binaries.sh). It sets
#
#   KUBE_VERSION   the k8s.io/kubernetes release (default v1.37.2)
#   kube_cache     ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}
#   kubedir        $kube_cache/kube-$KUBE_VERSION, where the binaries go
#   kube_ldflags   the -ldflags that stamp the release into the binaries
#                  (without them they report v0.0.0)
#
# and defines kube_module DIR, which writes there the scratch module every
# build runs in: it requires k8s.io/kubernetes and pins its staging modules
# (its go.mod replaces them with ./staging paths, which a module download
# does not have) to the matching v0.x release. k8s.io/sample-cli-plugin and
# k8s.io/sample-controller are not needed and not served. The builds run
# with GOFLAGS=-mod=mod CGO_ENABLED=0, exported here.

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
kube_cache=${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}
kubedir="$kube_cache/kube-$KUBE_VERSION"
kube_staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
mount-utils pod-security-admission sample-apiserver streaming"

# v1.37.2 → major 1, minor 37; the staging release is v0.37.2.
kube_major=$(echo "$KUBE_VERSION" | cut -d. -f1 | tr -d v)
kube_minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
kube_patch=$(echo "$KUBE_VERSION" | cut -d. -f3)
kube_staging_version="v0.$kube_minor.$kube_patch"
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION
	-X k8s.io/component-base/version.gitMajor=$kube_major -X k8s.io/component-base/version.gitMinor=$kube_minor
	-X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION
	-X k8s.io/client-go/pkg/version.gitMajor=$kube_major -X k8s.io/client-go/pkg/version.gitMinor=$kube_minor"
export GOFLAGS=-mod=mod CGO_ENABLED=0

# kube_module DIR writes the scratch module into DIR (created).
kube_module() {
	mkdir -p "$1"
	(
		cd "$1"
		go mod init podhost.invalid/kubebuild >/dev/null 2>&1
		go mod edit -require="k8s.io/kubernetes@$KUBE_VERSION"
		for m in $kube_staging; do
			go mod edit -replace="k8s.io/$m=k8s.io/$m@$kube_staging_version"
		done
	)
}
