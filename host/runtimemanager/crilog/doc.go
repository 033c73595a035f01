// Package crilog reads container log files in the CRI format that runtimes
// write for podhost: one entry per line,
//
//	<RFC3339Nano time> <stdout|stderr> <F|P> <text>
//
// where P marks a partial line continued by the next entry and F a full
// (final) one. Stream copies a file's text to a writer, optionally
// following it as the runtime appends; ParseLine parses one entry.
// host/node imports it to serve the local API's logs endpoint (what
// `podhost logs` shows); it imports only the standard library.
package crilog
