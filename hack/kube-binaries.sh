#!/bin/sh
# kube-binaries.sh builds the real Kubernetes parts that the Kubernetes-mode
# tests run against: kube-apiserver, kubectl, kube-controller-manager and
# kube-scheduler from k8s.io/kubernetes, and etcd from
# go.etcd.io/etcd/server/v3, all from the Go module proxy. The
# binaries go to a cache outside the checkout, keyed by version, so that a
# fresh clone (CI) builds them once per machine:
#
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/kube-$KUBE_VERSION/{kube-apiserver,kubectl,kube-controller-manager,kube-scheduler}
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/etcd-$ETCD_VERSION/etcd
#
# A binary already in the cache is kept. k8s.io/kubernetes is built in the
# scratch module of hack/kube-module.sh. Cold, kube-apiserver and kubectl
# take about 6 minutes and 2.3 GiB on a quiet machine; the controller manager
# and the scheduler (test/kubecluster starts them when asked) share most of
# their packages.
# Prints the two cache directories on its last lines.
set -eu

. "$(dirname "$0")/kube-module.sh"
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
etcddir="$kube_cache/etcd-$ETCD_VERSION"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

missing=""
for cmd in kube-apiserver kubectl kube-controller-manager kube-scheduler; do
	[ -x "$kubedir/$cmd" ] || missing="$missing $cmd"
done
if [ -n "$missing" ]; then
	echo "kube-binaries: building$missing $KUBE_VERSION into $kubedir"
	mkdir -p "$kubedir" "$work/out"
	kube_module "$work/kube"
	cd "$work/kube"
	pkgs=""
	for cmd in $missing; do
		pkgs="$pkgs k8s.io/kubernetes/cmd/$cmd"
	done
	# shellcheck disable=SC2086 # pkgs is a list
	go build -trimpath -ldflags "$kube_ldflags" -o "$work/out/" $pkgs
	for cmd in $missing; do
		mv "$work/out/$cmd" "$kubedir/$cmd"
	done
fi

if [ ! -x "$etcddir/etcd" ]; then
	echo "kube-binaries: building etcd $ETCD_VERSION into $etcddir"
	mkdir -p "$work/etcd" "$etcddir"
	cd "$work/etcd"
	go mod init podhost.invalid/etcdbuild >/dev/null 2>&1
	go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION"
	go build -trimpath -ldflags "-s -w" -o "$etcddir/etcd.tmp" go.etcd.io/etcd/server/v3
	mv "$etcddir/etcd.tmp" "$etcddir/etcd"
fi

"$kubedir/kube-apiserver" --version
"$etcddir/etcd" --version | head -n 1
echo "$kubedir"
echo "$etcddir"
