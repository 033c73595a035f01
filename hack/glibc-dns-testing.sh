#!/bin/sh
# glibc-dns-testing.sh builds the root filesystem of the suite's image
# registry.k8s.io/e2e-test-images/glibc-dns-testing (test/conformance builds
# the image from it), into the cache hack/kube-binaries.sh fills:
#
#   ${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}/glibc-dns-testing-$GLIBC_DNS_TESTING_VERSION/rootfs.tar
#
# Upstream's image (k8s.io/kubernetes test/images/glibc-dns-testing) is
# debian:bookworm-slim with `apt-get install -y dnsutils`, apt's cache and
# lists removed, and coredns 1.5.0's release tarball unpacked at /. The
# "Override hostname of Pod" specs run `hostname -f` in it: glibc's
# getaddrinfo over the pod's /etc/hosts, which busybox (its own resolver)
# does not answer the same way. This script builds the same thing from
# Debian's archive (the one the machine's apt sources name,
# hack/debian-mirror.sh):
#
#   - debootstrap --variant=minbase bookworm, the base debian:*-slim images
#     are made from, slimmed as those are: dpkg excludes documentation, man
#     and info pages and translations (a package's copyright file stays),
#     and what debootstrap installed of them is removed;
#   - the apt sources of the slim image (bookworm, bookworm-updates and
#     bookworm-security where the machine's apt names a security archive),
#     dist-upgrade, then `apt-get install -y dnsutils` as the Dockerfile
#     runs it (recommends included), apt-get clean and the lists removed;
#   - /coredns: github.com/coredns/coredns v1.5.0 built from the Go module
#     proxy (CGO_ENABLED=0, its go.mod's replace copied into a scratch
#     module), where upstream unpacks the release binary of that tag.
#
# /etc/hostname, /etc/hosts and /etc/resolv.conf, which debootstrap copies
# from the machine, are left out (the runtime mounts the pod's own); so are
# the contents of /dev, /proc and /sys. It needs root (debootstrap, chroot)
# and debootstrap (`hack/install-deps.sh --busybox-build` installs it); the
# chroot's /proc is mounted in a private mount namespace only. Every step runs
# under nice. An archive already in the cache is kept. Prints the archive's
# path on its last line. With --check it builds nothing and exits 0 only
# when the archive is cached.
set -eu

GLIBC_DNS_TESTING_VERSION=${GLIBC_DNS_TESTING_VERSION:-2.1.1}
# test/images/glibc-dns-testing/BASEIMAGE: debian:bookworm-slim.
DEBIAN_SUITE=bookworm
COREDNS_VERSION=v1.5.0
kube_cache=${PODHOST_KUBE_CACHE:-$HOME/.cache/podhost}
gdir="$kube_cache/glibc-dns-testing-$GLIBC_DNS_TESTING_VERSION"
archive="$gdir/rootfs.tar"

if [ "${1:-}" = "--check" ]; then
	[ -f "$archive" ] && exit 0
	echo "glibc-dns-testing: not cached: $archive"
	exit 1
fi

if [ ! -f "$archive" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "glibc-dns-testing: debootstrap and chroot need root" >&2
		exit 1
	fi
	for tool in debootstrap go unshare chroot; do
		command -v "$tool" >/dev/null || {
			echo "glibc-dns-testing: no $tool; install debootstrap with: bash hack/install-deps.sh --busybox-build" >&2
			exit 1
		}
	done
	here=$(cd "$(dirname "$0")" && pwd)
	mirror=$(sh "$here/debian-mirror.sh")
	security=$(sh "$here/debian-mirror.sh" "$DEBIAN_SUITE-security" 2>/dev/null) ||
		echo "glibc-dns-testing: the machine's apt names no $DEBIAN_SUITE-security archive; the image goes without its updates" >&2
	echo "glibc-dns-testing: building $GLIBC_DNS_TESTING_VERSION into $gdir"
	start=$(date +%s)
	work=$(mktemp -d)
	# Nothing is removed while something is still mounted under it.
	trap 'if grep -q " $work/" /proc/mounts; then echo "glibc-dns-testing: $work still has mounts; left in place" >&2; else rm -rf "$work"; fi' EXIT
	root="$work/rootfs"

	nice -n 19 debootstrap --variant=minbase "$DEBIAN_SUITE" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
		tail -n 30 "$work/debootstrap.log" >&2
		exit 1
	}

	# Slim: what dpkg leaves out from now on, and what is already there.
	mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
	cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<-EOF
		path-exclude /usr/share/doc/*
		path-include /usr/share/doc/*/copyright
		path-exclude /usr/share/info/*
		path-exclude /usr/share/linda/*
		path-exclude /usr/share/lintian/overrides/*
		path-exclude /usr/share/locale/*
		path-exclude /usr/share/man/*
	EOF
	find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
	find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
	for d in info linda lintian/overrides locale man; do
		if [ -d "$root/usr/share/$d" ]; then find "$root/usr/share/$d" -mindepth 1 -delete; fi
	done

	rm -f "$root/etc/apt/sources.list"
	{
		printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
			"$mirror" "$DEBIAN_SUITE" "$DEBIAN_SUITE"
		if [ -n "$security" ]; then
			printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
				"$security" "$DEBIAN_SUITE"
		fi
	} >"$root/etc/apt/sources.list.d/debian.sources"
	rm -f "$root/etc/resolv.conf"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
	# The Dockerfile's RUN, in a chroot with its own /proc that goes away
	# with the mount namespace.
	nice -n 19 unshare --mount --fork sh -c '
		set -e
		mount -t proc proc "$1/proc"
		DEBIAN_FRONTEND=noninteractive chroot "$1" sh -c "
			apt-get update -q &&
			apt-get dist-upgrade -y -q &&
			apt-get install -y -q dnsutils &&
			apt-get clean"
	' - "$root" >"$work/apt.log" 2>&1 || {
		tail -n 30 "$work/apt.log" >&2
		exit 1
	}
	rm -rf "$root/var/lib/apt/lists/"*
	rm -f "$root/etc/hostname" "$root/etc/hosts" "$root/etc/resolv.conf"

	# coredns at / as its release tarball holds it: one binary, coredns.
	mkdir -p "$work/coredns"
	cat >"$work/coredns/go.mod" <<-EOF
		module podhost.local/coredns

		go 1.12

		require github.com/coredns/coredns $COREDNS_VERSION

		replace github.com/DataDog/dd-trace-go v0.6.1 => github.com/datadog/dd-trace-go v0.6.1
	EOF
	(cd "$work/coredns" && GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "-s -w" \
		-o "$root/coredns" github.com/coredns/coredns)

	mkdir -p "$gdir"
	tar --numeric-owner -C "$root" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
		-cf "$archive.tmp" .
	mv "$archive.tmp" "$archive"
	echo "glibc-dns-testing: built in $(($(date +%s) - start)) s"
fi

echo "glibc-dns-testing: Debian $(tar -xOf "$archive" ./etc/debian_version), $(tar -tf "$archive" | wc -l) entries"
echo "$archive"
