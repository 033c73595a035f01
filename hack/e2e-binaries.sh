#!/bin/sh
# e2e-binaries.sh builds what `make conformance` runs the upstream Kubernetes
# node conformance suite with, from the Go module proxy in the scratch module
# of hack/kube-module.sh, into the cache kube-binaries.sh fills:
#
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/kube-$KUBE_VERSION/
#     ginkgo      (github.com/onsi/ginkgo/v2/ginkgo at the version k8s.io/kubernetes requires)
#     agnhost, nonewprivs                       (k8s.io/kubernetes/test/images/…)
#     e2e.test    (go test -c k8s.io/kubernetes/test/e2e)
#     agnhost-porter/localhost.{crt,key}        (from test/images/agnhost/porter)
#
# and, through hack/busybox.sh, the upstream busybox of the conformance
# images in $kube_cache/busybox-VERSION/busybox (minutes, not an hour), and
# through hack/glibc-dns-testing.sh the Debian root filesystem of the
# glibc-dns-testing image in $kube_cache/glibc-dns-testing-VERSION/rootfs.tar
# (minutes too).
# kube-scheduler and kube-controller-manager, which the suite needs too, come
# from hack/kube-binaries.sh. A binary already in the cache is kept; only
# missing ones are built. Cold on
# two busy cores this takes well over an hour (e2e.test is most of it), so
# every build runs under `nice -n 19`. Prints the cache directory on its last
# line. With --check it builds nothing and exits 0 only when everything is
# cached, busybox and glibc-dns-testing included (make test runs the
# conformance fast subset then).
set -eu

. "$(dirname "$0")/kube-module.sh"

missing=""
for b in ginkgo agnhost nonewprivs e2e.test; do
	[ -x "$kubedir/$b" ] || missing="$missing $b"
done
[ -f "$kubedir/agnhost-porter/localhost.key" ] || missing="$missing agnhost-porter"
if [ "${1:-}" = "--check" ]; then
	[ -z "$missing" ] || echo "e2e-binaries: not cached in $kubedir:$missing"
	sh "$(dirname "$0")/busybox.sh" --check && sh "$(dirname "$0")/glibc-dns-testing.sh" --check && [ -z "$missing" ]
	exit
fi

sh "$(dirname "$0")/busybox.sh"
sh "$(dirname "$0")/glibc-dns-testing.sh"

if [ -n "$missing" ]; then
	echo "e2e-binaries: building$missing $KUBE_VERSION into $kubedir"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$kubedir"
	kube_module "$work/kube"
	cd "$work/kube"
	# ginkgo must be the release k8s.io/kubernetes requires: the CLI and
	# the library in e2e.test talk to each other.
	kube_gomod=$(go list -m -f '{{.GoMod}}' k8s.io/kubernetes)
	ginkgo_want=$(awk '$1 == "github.com/onsi/ginkgo/v2" { print $2; exit }' "$kube_gomod")
	ginkgo_got=$(go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)
	if [ "$ginkgo_want" != "$ginkgo_got" ]; then
		echo "e2e-binaries: the scratch module selects ginkgo $ginkgo_got, k8s.io/kubernetes requires $ginkgo_want" >&2
		exit 1
	fi
	case $missing in
	*agnhost-porter*)
		# The agnhost image carries porter's certificate and key.
		mkdir -p "$kubedir/agnhost-porter"
		src="$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images/agnhost/porter"
		cp "$src/localhost.crt" "$src/localhost.key" "$kubedir/agnhost-porter/"
		chmod 0644 "$kubedir/agnhost-porter/"*
		;;
	esac
	# One go build for the programs (they share most packages), then
	# the test binary.
	pkgs=""
	for b in $missing; do
		case $b in
		ginkgo) pkgs="$pkgs github.com/onsi/ginkgo/v2/ginkgo" ;;
		agnhost | nonewprivs) pkgs="$pkgs k8s.io/kubernetes/test/images/$b" ;;
		esac
	done
	if [ -n "$pkgs" ]; then
		start=$(date +%s)
		mkdir -p "$work/out"
		# shellcheck disable=SC2086 # pkgs is a list
		nice -n 19 go build -trimpath -ldflags "$kube_ldflags" -o "$work/out/" $pkgs
		for b in $missing; do
			if [ -f "$work/out/$b" ]; then mv "$work/out/$b" "$kubedir/$b"; fi
		done
		echo "e2e-binaries:$pkgs built in $(($(date +%s) - start)) s"
	fi
	case $missing in
	*e2e.test*)
		start=$(date +%s)
		nice -n 19 go test -c -vet=off -trimpath -ldflags "$kube_ldflags" -o "$kubedir/e2e.test.tmp" k8s.io/kubernetes/test/e2e
		mv "$kubedir/e2e.test.tmp" "$kubedir/e2e.test"
		echo "e2e-binaries: e2e.test built in $(($(date +%s) - start)) s"
		;;
	esac
fi

"$kubedir/ginkgo" version
echo "$kubedir"
