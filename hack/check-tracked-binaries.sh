#!/bin/sh
# check-tracked-binaries.sh fails when a tracked file is an executable
# binary (ELF) or a property-test failure record (testdata/rapid): both are
# build or test output, never source. `make lint` runs it.
set -eu
bad=0
for f in $(git ls-files); do
	[ -f "$f" ] || continue
	case "$f" in
	*/testdata/rapid/* | testdata/rapid/*)
		echo "tracked test output: $f" >&2
		bad=1
		continue
		;;
	esac
	if [ "$(head -c 4 "$f" | od -An -c | tr -d ' \n')" = "177ELF" ]; then
		echo "tracked binary: $f" >&2
		bad=1
	fi
done
if [ "$bad" -ne 0 ]; then
	echo "remove the files above from git (git rm --cached) and let .gitignore keep them out" >&2
	exit 1
fi
