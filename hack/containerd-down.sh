#!/bin/sh
# containerd-down.sh DIR stops the private containerd that containerd-up.sh
# started under DIR: it removes every sandbox over CRI, stops containerd and
# kills any shim left behind. DIR itself is kept (log in DIR/containerd.log).
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
exec go run ./hack/cri-instance down "$(cd "$1" && pwd)"
