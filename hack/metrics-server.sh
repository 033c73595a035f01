#!/bin/sh
# metrics-server.sh builds the real metrics-server (sigs.k8s.io/metrics-server)
# from the Go module proxy into the cache of hack/kube-binaries.sh, keyed by
# version, for the Kubernetes-mode test of `kubectl top` (test/kubecluster
# runs it when Options.MetricsServer asks):
#
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/metrics-server-$METRICS_SERVER_VERSION/metrics-server
#
# A binary already in the cache is kept. The build runs in a scratch module
# that requires metrics-server alone, so its dependencies are the versions its
# own go.mod names (it has no replace directives), and stamps the release as
# upstream's Makefile does. v0.8.0 is the release the tests are written
# against (the proxy serves v0.9.0 too; it is not used). Cold (empty build
# cache, modules downloaded), it took 9.5 CPU-minutes and 1.2 GiB peak: 17
# minutes on 2 cores shared with other builds. Prints the cache directory on
# its last line.
set -eu

METRICS_SERVER_VERSION=${METRICS_SERVER_VERSION:-v0.8.0}
kube_cache=${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}
msdir="$kube_cache/metrics-server-$METRICS_SERVER_VERSION"
export GOFLAGS=-mod=mod CGO_ENABLED=0

if [ ! -x "$msdir/metrics-server" ]; then
	echo "metrics-server: building $METRICS_SERVER_VERSION into $msdir"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$msdir"
	cd "$work"
	go mod init podhost.invalid/metricsserverbuild >/dev/null 2>&1
	go mod edit -require="sigs.k8s.io/metrics-server@$METRICS_SERVER_VERSION"
	nice go build -trimpath \
		-ldflags "-s -w -X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION" \
		-o "$msdir/metrics-server.tmp" sigs.k8s.io/metrics-server/cmd/metrics-server
	mv "$msdir/metrics-server.tmp" "$msdir/metrics-server"
fi

"$msdir/metrics-server" --version
echo "$msdir"
