#!/bin/sh
# debian-mirror.sh [SUITE] prints the URI of the Debian archive this machine
# installs SUITE from (default: its own release, VERSION_CODENAME of
# /etc/os-release), as its apt sources name it, so that the scripts that
# fetch from Debian (hack/busybox.sh, hack/glibc-dns-testing.sh) use the
# archive the machine is configured for instead of naming one. It reads, in
# this order:
#
#   /etc/apt/sources.list.d/*.sources  deb822 entries: the first enabled one
#                                      of Types deb whose Suites hold SUITE;
#                                      its first URI
#   /etc/apt/sources.list, /etc/apt/sources.list.d/*.list
#                                      one-line entries: the first `deb`
#                                      line of SUITE; its URI
#
# DEBIAN_MIRROR, when set, is printed instead for the machine's own release
# (not for another SUITE such as bookworm-security, which another archive
# serves). With no such entry it fails and says what it looked for. The URI
# is printed without a trailing slash. APT_ETC replaces /etc/apt (tests).
set -eu

apt_etc=${APT_ETC:-/etc/apt}
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
codename=${1:-$release}
if [ -n "${DEBIAN_MIRROR:-}" ] && [ "$codename" = "$release" ]; then
	echo "${DEBIAN_MIRROR%/}"
	exit 0
fi
if [ -z "$codename" ]; then
	echo "debian-mirror: /etc/os-release names no VERSION_CODENAME; name the suite or set DEBIAN_MIRROR to the Debian archive's URI" >&2
	exit 1
fi

uri=""
for f in "$apt_etc"/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	# Paragraphs are separated by blank lines; a field may continue on
	# lines that start with white space.
	uri=$(awk -v want="$codename" '
		function flush(  u) {
			if (found) return
			gsub(/[ \t]+/, " ", v["uris"]); sub(/^ /, "", v["uris"])
			if (v["uris"] != "" && tolower(v["enabled"]) !~ /no/ &&
				(" " v["types"] " ") ~ /[ \t]deb[ \t]/ && (" " v["suites"] " ") ~ ("[ \t]" want "[ \t]")) {
				split(v["uris"], u, " ")
				print u[1]
				found = 1
				exit
			}
			split("", v); key = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ { if (key != "") v[key] = v[key] " " $0; next }
		{
			key = tolower($0); sub(/:.*/, "", key)
			val = $0; sub(/^[^:]*:/, "", val)
			v[key] = val
		}
		END { flush() }
	' "$f")
	[ -z "$uri" ] || break
done

if [ -z "$uri" ]; then
	for f in "$apt_etc"/sources.list "$apt_etc"/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk -v want="$codename" '
			$1 == "deb" {
				sub(/^deb[ \t]+/, "")
				if ($0 ~ /^\[/) sub(/^\[[^]]*\][ \t]*/, "")
				if ($2 == want) { print $1; exit }
			}
		' "$f")
		[ -z "$uri" ] || break
	done
fi

if [ -z "$uri" ]; then
	echo "debian-mirror: no apt source of Types deb for suite $codename in $apt_etc/sources.list.d/*.sources, $apt_etc/sources.list or $apt_etc/sources.list.d/*.list (DEBIAN_MIRROR sets the archive of the machine's own release)" >&2
	exit 1
fi
echo "${uri%/}"
