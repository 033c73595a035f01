// Command csi-loopdriver is a CSI driver (Identity, Controller and Node
// services on one unix socket) for tests and the demo. A volume is a
// sparse image file in the state dir; NodeStageVolume attaches it to a
// loop device and mounts it, making a real filesystem (ext4 unless the
// capability names another) when it has none; NodePublishVolume
// bind-mounts the staging mount, or for a block volume the loop device,
// at the target. NodeGetVolumeStats reports statfs (block: the device
// size). A NodePublishVolume whose volume_context has
// csi.storage.k8s.io/ephemeral: "true" is an inline ephemeral volume, as
// the hostpath driver serves one: never staged, made on the spot (of the
// context's `size`, else defaultVolumeSize), mounted at the target and
// deleted when it is unpublished (ephemeral.go). A NodePublishVolume
// whose volume_context has requiredSecret: <key> fails PERMISSION_DENIED
// unless its secrets have that key (the call log records the keys).
//
// It reads one config file (YAML or JSON) at start:
//
//	endpoint: unix:///run/csi-loop/csi.sock   # required
//	stateDir: /var/lib/csi-loop               # required: images and node records
//	nodeID: node-1                            # required
//	driverName: loop.csi.podhost.dev          # the default
//	callLog: /var/log/csi-loop/calls.jsonl    # optional
//	defaultVolumeSize: 1Gi                    # for CreateVolume without a capacity
//	capabilities: {stageUnstage: true, volumeStats: true}   # the defaults
//	volumes: [demo-data]                      # created at start, if missing
//	topology: {topology.loop.csi/node: node-1} # NodeGetInfo's accessible_topology (optional)
//	maxVolumesPerNode: 10                     # NodeGetInfo's max_volumes_per_node (0: none)
//	faults:
//	- {rpc: NodeStageVolume, action: fail, code: DeadlineExceeded, times: 3}
//	- {rpc: NodePublishVolume, action: delay, delay: 3s}
//	- {rpc: NodeUnstageVolume, action: hang, times: 1, volume: loop-…}
//
// A fault applies to the first `times` calls of its RPC (0: every call),
// of one volume if `volume` is set (a volume's ID is "loop-" and the first
// 32 hex digits of the SHA-256 of its name, so a test knows it before
// CreateVolume); the faults of an RPC are used up in
// the order listed, so two faults of times 1 script a first and a second
// failure. fail answers with the code without doing anything; delay is a
// slow driver: it waits, then does the call's work even if the caller
// has given up meanwhile (so a CO that timed out finds the volume staged
// all the same); hang does nothing and answers only when the caller gives
// up or the driver stops.
//
// The call log gets one JSON line per finished call: start, end, rpc,
// volume_id (for CreateVolume the ID its name makes), staging_target_path, target_path, volume_path,
// publish_context, volume_context, secret_keys (the keys of the
// request's secrets, sorted; never a value), code (the
// gRPC code name, "OK"), message, and fault (the action of an injected
// fault). Tests read it to see what a CO called.
//
// On SIGHUP the driver reads the config file again and takes its faults,
// with their counts from zero (so a test clears a fault by writing the
// config without it); the other fields keep their values from the start.
//
// Usage: csi-loopdriver -config FILE. It runs until SIGTERM or SIGINT and
// needs root, losetup, blkid and mkfs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "csi-loopdriver:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("csi-loopdriver", flag.ContinueOnError)
	configPath := fl.String("config", "", "the config file (YAML or JSON)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *configPath == "" || fl.NArg() != 0 {
		return fmt.Errorf("usage: csi-loopdriver -config FILE")
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := start(cfg, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return s.stop()
		case <-hup:
			s.reloadFaults(*configPath)
		}
	}
}
