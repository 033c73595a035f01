#!/usr/bin/env bash
# demo.sh: the main job, end to end, on this machine. It starts a private
# containerd (with the locally built pause and busybox images), starts the host
# with examples/host.yaml (rootDir, pluginDir, manifestDir and the plugin
# endpoints pointed at a temporary directory and at bin/) and the pods in
# examples/pods/, waits until every pod is Running or Succeeded, prints
# `podhost pods list`, keeps running until Ctrl-C or for DEMO_SECONDS, then
# deletes the pods, stops the host and containerd and removes what it created.
# The CSI loop driver (bin/csi-loopdriver) runs beside the host and serves
# the volume of the third pod, examples/csi/data.yaml.
# Run as root after `make build` (make demo installs containerd and runc when
# missing, and builds).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

work=$(mktemp -d /tmp/podhost-demo.XXXXXX)
ctrd="$work/ctrd"
root="$work/root"
pods="$work/pods"
sock="$root/host.sock"
host_pid=""
driver_pid=""
ready_timeout=${DEMO_READY_TIMEOUT:-90}

hostcli() { bin/podhost "$@"; }

# pods_listed prints the number of pods in `podhost pods list`.
pods_listed() { hostcli pods list --socket "$sock" 2>/dev/null | awk 'NR>1' | wc -l; }

cleanup() {
	set +e
	if [ -n "$host_pid" ] && kill -0 "$host_pid" 2>/dev/null; then
		echo "demo: deleting the pods (removing their manifests)"
		rm -f "$pods"/*.yaml
		for _ in $(seq 1 150); do
			[ "$(pods_listed)" -eq 0 ] && break
			sleep 0.2
		done
		if [ "$(pods_listed)" -ne 0 ]; then
			echo "demo: pods still listed after 30 s:" >&2
			hostcli pods list --socket "$sock" >&2
		fi
		echo "demo: stopping the host"
		kill -TERM "$host_pid"
		wait "$host_pid"
	fi
	if [ -n "$driver_pid" ] && kill -0 "$driver_pid" 2>/dev/null; then
		echo "demo: stopping the CSI loop driver"
		kill -TERM "$driver_pid"
		wait "$driver_pid"
	fi
	echo "demo: stopping the private containerd"
	bash hack/containerd-down.sh "$ctrd" >/dev/null 2>&1 || echo "demo: containerd-down failed; see $ctrd/containerd.log" >&2
	# The host made its root a shared bind mount of itself (mount
	# propagation), and keeps it, as the kubelet does, for the pods that
	# outlive it; the demo removes everything, so it goes too.
	if mountpoint -q "$root"; then
		umount -R "$root" || echo "demo: could not unmount $root" >&2
	fi
	rm -rf "$work"
	if [ -e "$work" ]; then
		echo "demo: $work is left behind" >&2
		exit 1
	fi
	echo "demo: removed $work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "demo: starting a private containerd under $ctrd"
endpoint=$(bash hack/containerd-up.sh "$ctrd" | tail -n 1)
echo "demo: containerd CRI endpoint $endpoint"

# The host config is examples/host.yaml with its paths and endpoints
# pointed at this demo; every substitution must hit, or the example changed
# under the demo.
mkdir -p "$pods"
sed -e "s|^rootDir: .*|rootDir: $root|" \
	-e "s|^pluginDir: .*|pluginDir: $repo/bin/plugins|" \
	-e "s|^manifestDir: .*|manifestDir: $pods|" \
	-e "s|endpoint: unix:///run/containerd/containerd.sock|endpoint: $endpoint|" \
	-e "s|endpoint: unix:///run/csi/loop.sock|endpoint: unix://$work/csi.sock|" \
	examples/host.yaml >"$work/host.yaml"
for want in "rootDir: $root" "pluginDir: $repo/bin/plugins" "manifestDir: $pods" "endpoint: $endpoint" "endpoint: unix://$work/csi.sock"; do
	if ! grep -qF "$want" "$work/host.yaml"; then
		echo "demo: examples/host.yaml no longer has the line the demo rewrites to: $want" >&2
		exit 1
	fi
done
echo "demo: starting the CSI loop driver on $work/csi.sock"
cat >"$work/csi.yaml" <<CSI
endpoint: unix://$work/csi.sock
stateDir: $work/csi-state
nodeID: demo
defaultVolumeSize: 64Mi
volumes: [demo-data]
CSI
bin/csi-loopdriver -config "$work/csi.yaml" 2>"$work/csi.log" &
driver_pid=$!
cp examples/pods/*.yaml examples/csi/data.yaml "$pods/"
want_pods=$(find "$pods" -name '*.yaml' | wc -l)

hostcli validate --config "$work/host.yaml"
bin/podhost run --config "$work/host.yaml" 2>"$work/host.log" &
host_pid=$!

echo "demo: waiting up to ${ready_timeout}s for $want_pods pods to be Running or Succeeded"
deadline=$((SECONDS + ready_timeout))
while :; do
	if ! kill -0 "$host_pid" 2>/dev/null; then
		echo "demo: the host exited; its log:" >&2
		cat "$work/host.log" >&2
		exit 1
	fi
	list=$(hostcli pods list --socket "$sock" 2>/dev/null || true)
	done_pods=$(printf '%s\n' "$list" | awk 'NR>1 && ($2=="Running" || $2=="Succeeded")' | wc -l)
	all_pods=$(printf '%s\n' "$list" | awk 'NR>1' | wc -l)
	if [ "$done_pods" -eq "$want_pods" ] && [ "$all_pods" -eq "$want_pods" ]; then
		break
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "demo: pods not Running or Succeeded within ${ready_timeout}s:" >&2
		printf '%s\n' "$list" >&2
		echo "demo: events:" >&2
		hostcli events --socket "$sock" >&2 || true
		echo "demo: host log:" >&2
		cat "$work/host.log" >&2
		echo "demo: CSI loop driver log:" >&2
		cat "$work/csi.log" >&2
		exit 1
	fi
	sleep 0.5
done
hostcli plugins list --socket "$sock"
echo
hostcli pods list --socket "$sock"
echo
node=$(hostname)
echo "demo: output of the job (podhost logs default/demo-job-$node):"
hostcli logs --socket "$sock" "default/demo-job-$node" || true
echo "demo: the CSI volume pod (podhost logs default/demo-data-$node):"
hostcli logs --socket "$sock" --tail 2 "default/demo-data-$node" || true

secs=${DEMO_SECONDS:-}
if [ -n "$secs" ]; then
	echo "demo: running for $secs s (host log: $work/host.log)"
	sleep "$secs"
else
	echo "demo: running until Ctrl-C (host log: $work/host.log)"
	wait "$host_pid"
fi
echo
hostcli pods list --socket "$sock"
echo
echo "demo: the service's last lines (podhost logs default/demo-service-$node):"
hostcli logs --socket "$sock" --tail 3 "default/demo-service-$node" || true
