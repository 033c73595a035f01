#!/bin/sh
# busybox.sh builds upstream busybox, statically, for the images of the
# upstream node conformance suite (test/conformance: the busybox, agnhost,
# nonewprivs and nonroot images), into the cache hack/kube-binaries.sh fills:
#
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/busybox-$BUSYBOX_VERSION/busybox
#
# Debian's busybox will not do there: its packages (bookworm's 1.35 and
# trixie's 1.37) revert upstream ash's keeping of environment names that are
# not identifiers (the ConfigMap and Secrets "consumable via the environment"
# specs read data-1=value-1 from `sh -c env`), and bookworm's nc has no -u
# (the node-pod UDP spec runs `nc -w 1 -u` in the agnhost image). The
# upstream images run busybox built from upstream's source with its
# defconfig, which keeps both; so does this build. podhost's own test image
# (podhost.local/busybox:1, images/localimages) stays on Debian's
# busybox-static; make test builds this one too (make conformance-sources),
# for test/conformance's check of it.
#
# The source is upstream's release tarball as Debian's archive carries it
# (the pristine .orig.tar.bz2 of the busybox source package), from the
# archive the machine's apt sources name (hack/debian-mirror.sh), fetched with
# apt-get source --download-only into a private apt state (the system's apt
# lists and sources are not touched); apt checks it against the signed .dsc,
# and this script against upstream's SHA-256 besides. The build is upstream's
# `make defconfig` with CONFIG_STATIC=y and nothing else changed (defconfig
# already has CONFIG_NC_110_COMPAT, nc -u, and CONFIG_TC, which builds with
# bookworm's kernel headers). It needs gcc, make, libc6-dev and bzip2:
# `hack/install-deps.sh --busybox-build` installs them. Cold on 2 cores
# (make -j2 under nice), the compile alone took 132 s at load 3; the whole
# script, the source download included, 278 s at load 10 and 842 s at load 25. A
# binary already in the cache is kept. Prints the binary's path on its last
# line. With --check it builds nothing and exits 0 only when the binary is
# cached.
set -eu

BUSYBOX_VERSION=${BUSYBOX_VERSION:-1.37.0}
# Upstream's busybox-1.37.0.tar.bz2 (busybox.net), byte for byte Debian's
# busybox_1.37.0.orig.tar.bz2.
BUSYBOX_SHA256=3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4
# trixie's busybox source package (1.37.0-6) has this orig tarball.
BUSYBOX_SUITE=${BUSYBOX_SUITE:-trixie}
kube_cache=${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}
bbdir="$kube_cache/busybox-$BUSYBOX_VERSION"

if [ "${1:-}" = "--check" ]; then
	[ -x "$bbdir/busybox" ] && exit 0
	echo "busybox: not cached: $bbdir/busybox"
	exit 1
fi

if [ ! -x "$bbdir/busybox" ]; then
	for tool in gcc make bzip2; do
		command -v "$tool" >/dev/null || {
			echo "busybox: no $tool; install the build tools with: bash hack/install-deps.sh --busybox-build" >&2
			exit 1
		}
	done
	# The archive this machine's apt installs from (hack/debian-mirror.sh).
	mirror=$(sh "$(dirname "$0")/debian-mirror.sh")
	echo "busybox: building $BUSYBOX_VERSION into $bbdir"
	start=$(date +%s)
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	cd "$work"
	mkdir -p apt/lists/partial apt/cache/archives/partial src
	# apt downloads as its own user _apt where it can (as root).
	chmod 0755 "$work"
	chown _apt src 2>/dev/null || true
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $BUSYBOX_SUITE main" >apt/sources.list
	set -- -q -o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
	apt-get "$@" update >/dev/null
	cd src
	apt-get "$@" source --download-only busybox >/dev/null
	tarball="busybox_$BUSYBOX_VERSION.orig.tar.bz2"
	if ! echo "$BUSYBOX_SHA256  $tarball" | sha256sum -c - >/dev/null; then
		echo "busybox: $tarball from $BUSYBOX_SUITE is not upstream's busybox-$BUSYBOX_VERSION.tar.bz2 (SHA-256 $BUSYBOX_SHA256)" >&2
		exit 1
	fi
	tar xjf "$tarball"
	cd "busybox-$BUSYBOX_VERSION"
	make defconfig >/dev/null
	sed -i 's/^# CONFIG_STATIC is not set$/CONFIG_STATIC=y/' .config
	make oldconfig </dev/null >/dev/null
	grep -qx CONFIG_STATIC=y .config
	nice -n 19 make -j"$(nproc)" >"$work/build.log" 2>&1 || {
		tail -n 30 "$work/build.log" >&2
		exit 1
	}
	mkdir -p "$bbdir"
	cp busybox "$bbdir/busybox.tmp"
	mv "$bbdir/busybox.tmp" "$bbdir/busybox"
	echo "busybox: built in $(($(date +%s) - start)) s"
fi

"$bbdir/busybox" | head -n 1
echo "$bbdir/busybox"
