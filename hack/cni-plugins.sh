#!/bin/sh
# cni-plugins.sh builds the reference CNI plugins that give the private
# containerd of the tests a pod network (test/crisetup, WithPodNetwork):
# bridge, host-local, loopback and portmap from
# github.com/containernetworking/plugins, from the Go module proxy. They go
# to a cache outside the checkout, keyed by version, so that a fresh clone
# (CI) builds them once per machine:
#
#   ${PODHOST_CNI_CACHE:-$HOME/.cache/podhost}/cni-plugins-$CNI_VERSION/{bridge,host-local,loopback,portmap}
#
# A binary already in the cache is kept. Pure Go, static (CGO_ENABLED=0);
# under a minute cold. Prints the cache directory on its last line.
set -eu

CNI_VERSION=${CNI_VERSION:-v1.10.0}
cache=${PODHOST_CNI_CACHE:-$HOME/.cache/podhost}
dir="$cache/cni-plugins-$CNI_VERSION"
plugins="main/bridge ipam/host-local main/loopback meta/portmap"

missing=""
for p in $plugins; do
	[ -x "$dir/$(basename "$p")" ] || missing="$missing $p"
done

if [ -n "$missing" ]; then
	echo "cni-plugins: building$missing $CNI_VERSION into $dir"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	export GOFLAGS=-mod=mod CGO_ENABLED=0
	mkdir -p "$dir"
	cd "$work"
	go mod init podhost.invalid/cnibuild >/dev/null 2>&1
	go mod edit -require="github.com/containernetworking/plugins@$CNI_VERSION"
	for p in $missing; do
		name=$(basename "$p")
		go build -trimpath -ldflags "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_VERSION" -o "$dir/$name.tmp" "github.com/containernetworking/plugins/plugins/$p"
		mv "$dir/$name.tmp" "$dir/$name"
	done
fi

"$dir/bridge" --version 2>&1 | head -n 1 || true
echo "$dir"
