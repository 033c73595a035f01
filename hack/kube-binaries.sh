#!/bin/sh
# kube-binaries.sh builds the real Kubernetes parts that the Kubernetes-mode
# tests run against: kube-apiserver and kubectl from k8s.io/kubernetes, and
# etcd from go.etcd.io/etcd/server/v3, all from the Go module proxy. The
# binaries go to a cache outside the checkout, keyed by version, so that a
# fresh clone (CI) builds them once per machine:
#
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/kube-$KUBE_VERSION/{kube-apiserver,kubectl}
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/etcd-$ETCD_VERSION/etcd
#
# A binary already in the cache is kept. k8s.io/kubernetes is built from a
# scratch module that pins its staging modules (its go.mod replaces them with
# ./staging paths, which a module download does not have) to the matching
# v0.x release; k8s.io/sample-cli-plugin and k8s.io/sample-controller are not
# needed and not served. Cold, this takes about 6 minutes and 2.3 GiB.
# Prints the two cache directories on its last lines.
set -eu

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
cache=${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}
kubedir="$cache/kube-$KUBE_VERSION"
etcddir="$cache/etcd-$ETCD_VERSION"
staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
mount-utils pod-security-admission sample-apiserver streaming"

# minor turns v1.37.2 into 37 and v0.37.2 is the staging release.
minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
major=$(echo "$KUBE_VERSION" | cut -d. -f1 | tr -d v)
patch=$(echo "$KUBE_VERSION" | cut -d. -f3)
stagingVersion="v0.$minor.$patch"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod CGO_ENABLED=0

if [ ! -x "$kubedir/kube-apiserver" ] || [ ! -x "$kubedir/kubectl" ]; then
	echo "kube-binaries: building kube-apiserver and kubectl $KUBE_VERSION into $kubedir"
	mkdir -p "$work/kube" "$kubedir"
	cd "$work/kube"
	go mod init podhost.invalid/kubebuild >/dev/null 2>&1
	go mod edit -require="k8s.io/kubernetes@$KUBE_VERSION"
	for m in $staging; do
		go mod edit -replace="k8s.io/$m=k8s.io/$m@$stagingVersion"
	done
	ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION
		-X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor
		-X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION
		-X k8s.io/client-go/pkg/version.gitMajor=$major -X k8s.io/client-go/pkg/version.gitMinor=$minor"
	for cmd in kube-apiserver kubectl; do
		go build -trimpath -ldflags "$ldflags" -o "$kubedir/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
		mv "$kubedir/$cmd.tmp" "$kubedir/$cmd"
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
