#!/usr/bin/env bash
# Installs podhost from a build tree (make build): the host binary, its
# plugins, the example config (only if none exists) and the systemd unit.
# It does not start or restart anything: see docs/operations.md.
#
#   sudo deploy/install.sh            # from the repository root
#   DESTDIR=/tmp/stage deploy/install.sh   # stage into a directory instead
#
# Environment: DESTDIR (prefix for every path, default empty), SRC (build
# tree, default the repository holding this script).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${SRC:-$(dirname "$here")}"
dest="${DESTDIR:-}"

bindir="$dest/usr/local/bin"
plugindir="$dest/usr/libexec/podhost/plugins"
confdir="$dest/etc/podhost"
unitdir="$dest/usr/lib/systemd/system"
docdir="$dest/usr/share/doc/podhost"

die() { echo "install.sh: $*" >&2; exit 1; }

owner=()
if [ "$(id -u)" -eq 0 ]; then
	owner=(-o root -g root)
elif [ -z "$dest" ]; then
	die "run as root (or set DESTDIR to stage into a directory)"
fi

[ -x "$src/bin/podhost" ] || die "$src/bin/podhost not found or not executable; run make build first"
shopt -s nullglob
plugins=("$src"/bin/plugins/*)
[ "${#plugins[@]}" -gt 0 ] || die "no plugins in $src/bin/plugins; run make build first"

install -d -m 0755 "${owner[@]}" "$bindir" "$plugindir" "$confdir" "$unitdir" "$docdir"

# Binaries: 0755 and root-owned; the host refuses plugins that group or
# others can write.
install -m 0755 "${owner[@]}" "$src/bin/podhost" "$bindir/podhost"
for p in "${plugins[@]}"; do
	[ -f "$p" ] || continue
	install -m 0755 "${owner[@]}" "$p" "$plugindir/$(basename "$p")"
done

# Config: never overwrite the operator's.
if [ -e "$confdir/host.yaml" ]; then
	echo "install.sh: keeping existing $confdir/host.yaml"
else
	install -m 0644 "${owner[@]}" "$src/examples/host.yaml" "$confdir/host.yaml"
	echo "install.sh: installed example config $confdir/host.yaml; edit rootDir and plugins"
fi

install -m 0644 "${owner[@]}" "$here/podhost.service" "$unitdir/podhost.service"
if [ -e "$dest/etc/systemd/system/podhost.service" ]; then
	echo "install.sh: $dest/etc/systemd/system/podhost.service (from an older install) overrides the new unit;"
	echo "  remove it, and keep local changes as a drop-in (systemctl edit podhost)"
fi
if [ -f "$src/docs/operations.md" ]; then
	install -m 0644 "${owner[@]}" "$src/docs/operations.md" "$docdir/operations.md"
fi

echo "install.sh: installed; next: podhost validate --config /etc/podhost/host.yaml,"
echo "  then systemctl daemon-reload && systemctl enable --now podhost"
