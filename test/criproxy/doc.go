// Package criproxy is a gRPC proxy for tests and benchmarks that stands
// between a runtime plugin and containerd's socket. It forwards every call,
// unary or streaming, byte for byte with its metadata (CRI on
// runtime.v1.*, containerd's own services such as events), counts the calls
// it receives per method, and fails a chosen method a chosen number of
// times with a chosen gRPC code before it reaches containerd.
//
// test/e2e imports it as the fault-injecting runtime wrapper (a runtime
// that fails StopContainer during a force delete), and bench/ imports it to
// count the CRI calls of a pod lifecycle. No product code imports it.
//
// It is written here rather than taken from a library: the proxies on the
// module proxy (mwitkow/grpc-proxy and its forks) are unmaintained and
// pull in an old grpc; a raw-bytes codec and grpc.UnknownServiceHandler
// are all it takes.
package criproxy
