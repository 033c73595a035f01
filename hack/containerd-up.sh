#!/bin/sh
# containerd-up.sh DIR starts a private containerd under DIR in the
# background (config, root, state, socket and log all inside DIR; the system
# containerd is never touched), imports podhost.local/pause:1 and
# podhost.local/busybox:1, and prints the CRI endpoint (unix://DIR/containerd.sock).
# Stop it with hack/containerd-down.sh DIR. Needs root and hack/install-deps.sh.
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
mkdir -p "$1"
exec go run ./hack/cri-instance up "$(cd "$1" && pwd)"
