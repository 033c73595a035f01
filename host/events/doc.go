// Package events owns the host's user-facing event log: Kubernetes-style
// events (Pulled, Started, BackOff, FailedMount, PluginRestarted, …) about
// pods, plugins and the node, kept in memory in a bounded ring.
//
// Ring implements lifecycle.Recorder and never blocks the caller: a record
// takes a mutex held for a few map and slice operations. An event identical
// to the previous event of the same object (same type, reason and message)
// is folded into it: its Count grows and its LastTime moves, as
// `kubectl get events` shows repeated events. When the ring is full the
// oldest entry is dropped.
//
// Readers use List (a snapshot, optionally filtered by object and time) or
// Watch (a stream). A watcher has a fixed buffer: a watcher that does not
// keep up loses events rather than slow the recorder down; the counter
// podhost_events_watch_dropped_total (registered through Options.Registry)
// counts what was lost, and a client that needs the full picture re-reads
// List.
//
// Events live only in memory: they are lost when the host restarts, like
// the kubelet's before they reach the API server. Only host/node imports
// this package; it hands the ring to the local API through an Events view
// (host/localapi does not import it), and the lifecycle core sees only
// lifecycle.Recorder.
package events
