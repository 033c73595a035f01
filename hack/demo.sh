#!/usr/bin/env bash
# demo.sh: the main job, end to end, on this machine. It starts a private
# containerd (with the locally built pause and busybox images), starts the host
# with the real plugin binaries from bin/, waits until the host is ready,
# prints `host plugins list`, keeps running until Ctrl-C or for DEMO_SECONDS,
# then stops everything it started and removes what it created.
# Run as root after `make build` (make demo does both).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

work=$(mktemp -d /tmp/podhost-demo.XXXXXX)
ctrd="$work/ctrd"
root="$work/root"
host_pid=""

cleanup() {
	set +e
	if [ -n "$host_pid" ] && kill -0 "$host_pid" 2>/dev/null; then
		echo "demo: stopping the host (SIGTERM: plugins stop, containers keep running)"
		kill -TERM "$host_pid"
		wait "$host_pid"
	fi
	echo "demo: stopping the private containerd"
	bash hack/containerd-down.sh "$ctrd" >/dev/null 2>&1
	rm -rf "$work"
	echo "demo: removed $work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "demo: starting a private containerd under $ctrd"
endpoint=$(bash hack/containerd-up.sh "$ctrd" | tail -n 1)
echo "demo: containerd CRI endpoint $endpoint"

cat >"$work/host.yaml" <<YAML
apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: $root
pluginDir: $repo/bin/plugins
logLevel: info
plugins:
  - name: containerd
    kind: runtime
    path: runtime-containerd
    config:
      endpoint: $endpoint
  - name: csi
    kind: volume
    path: volume-csi
    required: false
    config:
      drivers:
        - name: loop.csi.podhost.dev
          endpoint: unix://$work/csi.sock
YAML

bin/host validate --config "$work/host.yaml"
bin/host run --config "$work/host.yaml" 2>"$work/host.log" &
host_pid=$!

echo "demo: waiting for the host to be ready"
for _ in $(seq 1 150); do
	if ! kill -0 "$host_pid" 2>/dev/null; then
		echo "demo: the host exited; its log:" >&2
		cat "$work/host.log" >&2
		exit 1
	fi
	if bin/host plugins list --socket "$root/host.sock" >/dev/null 2>&1 &&
		! bin/host plugins list --socket "$root/host.sock" | awk 'NR>1 && $4!="running"' | grep -q .; then
		break
	fi
	sleep 0.2
done
bin/host plugins list --socket "$root/host.sock"

secs=${DEMO_SECONDS:-}
if [ -n "$secs" ]; then
	echo "demo: running for $secs s (host log: $work/host.log)"
	sleep "$secs"
else
	echo "demo: running until Ctrl-C (host log: $work/host.log)"
	wait "$host_pid"
fi
