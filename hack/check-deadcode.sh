#!/bin/sh
# Fails when a function of the module is unreachable from every main
# package (golang.org/x/tools/cmd/deadcode, given as $1), unless
# hack/deadcode-allow.txt allows it (test support, the SDK's API).
set -eu
deadcode=${1:?usage: hack/check-deadcode.sh PATH-TO-DEADCODE}
allow=$(mktemp)
trap 'rm -f "$allow"' EXIT
grep -v -e '^#' -e '^$' hack/deadcode-allow.txt >"$allow"
out=$("$deadcode" ./...)
left=$(printf '%s\n' "$out" | sed -E 's/:[0-9]+:[0-9]+: / /' | grep -v -E -f "$allow" || true)
if [ -n "$left" ]; then
	printf '%s\n' "$left" >&2
	echo "deadcode: the functions above are unreachable from every main package; wire them or delete them (test support goes in hack/deadcode-allow.txt)" >&2
	exit 1
fi
