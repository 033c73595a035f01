#!/bin/sh
# install-deps.sh installs the host packages that the containerd tests, the
# CRI floor benchmark and hack/containerd-up.sh need: containerd, runc and
# busybox-static (the source of the busybox test image), bash-static (the
# conformance agnhost image's /bin/bash), iproute2 (ip, which
# sets up the bridge of the tests' pod network), and systemd for
# systemd-analyze, which checks the unit file in deploy/'s tests. It is idempotent and
# non-interactive; CI calls it before the e2e tests. Run it as root.
#
# With --busybox-build it installs instead what hack/busybox.sh compiles
# upstream busybox with for the conformance images (gcc, make, libc6-dev,
# bzip2 and the archive keyring apt checks the source with), and debootstrap,
# which hack/glibc-dns-testing.sh builds the glibc-dns-testing image's Debian
# root filesystem with; `make conformance-sources` asks for them (make test
# and make e2e-binaries run it).
set -eu

export DEBIAN_FRONTEND=noninteractive

packages="containerd runc busybox-static bash-static iproute2 systemd"
if [ "${1:-}" = "--busybox-build" ]; then
	packages="gcc make libc6-dev bzip2 debian-archive-keyring debootstrap"
fi

missing=""
for pkg in $packages; do
	if ! dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $pkg"
	fi
done

if [ -z "$missing" ]; then
	echo "install-deps: already installed: $packages"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: need root to install:$missing" >&2
	exit 1
fi

echo "install-deps: installing:$missing"
apt-get update -q
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y -q --no-install-recommends $missing
[ "${1:-}" = "--busybox-build" ] && exit 0

# The Debian package starts the system containerd; podhost's tests and demos
# run their own private instance and never use it.
containerd --version
runc --version | head -n 1
