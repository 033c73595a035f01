// Package volumev1 is the Go code generated from volume.proto
// (podhost.volume.v1): the node-side, idempotent Volume service a volume
// plugin serves (attach, stage, publish, block map, metrics, reconstruct,
// and the one error rule: every failure final, uncertain or transient). The .proto file and its comments are
// the contract; `make proto` regenerates the code, which is committed, and
// `make check-proto` fails when it is stale. This doc.go is the only
// hand-written file here.
//
// Both sides import it: on the plugin side the SDK, the conformance kit
// sdk/volumetest and every volume plugin; on the host's, host/node, whose
// volume plugin adapters (volumeplugins.go, volumescsi.go) serve the
// pods' CSI, FC and iSCSI volumes through it.
package volumev1
