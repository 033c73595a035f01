package main

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/podhost/podhost/sdk/mount"
)

// fakeDriver is a CSI Identity and Node server for the plugin's tests, on a
// real unix socket. It keeps the node semantics of a real driver: staging
// is tracked per path, Publish creates the target directory (with mounts
// set, bind-mounts the volume's data directory there, read-only when
// asked) and Unpublish removes it, and Publish of an unstaged volume is FAILED_PRECONDITION when
// it advertises STAGE_UNSTAGE_VOLUME. It records every call it receives.
type fakeDriver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedNodeServer

	name    string
	version string
	nodeID  string
	caps    []*csi.NodeServiceCapability
	// maxVolumes and topology are the rest of NodeGetInfo's answer.
	maxVolumes int64
	topology   map[string]string
	// hook, when set, runs at the start of each call; an error is returned
	// as the call's.
	hook func(ctx context.Context, method string) error
	// stats, when set, is the answer of NodeGetVolumeStats for a published
	// path.
	stats *csi.NodeGetVolumeStatsResponse

	mu        sync.Mutex
	calls     []fakeCall
	staged    map[string]string // staging path -> volume id
	published map[string]string // target path -> volume id
	// mounts makes Publish mount for real, as the conformance kit needs;
	// root then holds a data directory per volume.
	mounts bool
	root   string

	srv *grpc.Server
}

// fakeCall is one call the fake received.
type fakeCall struct {
	method string
	req    proto.Message
}

func rpcCaps(types ...csi.NodeServiceCapability_RPC_Type) []*csi.NodeServiceCapability {
	var out []*csi.NodeServiceCapability
	for _, t := range types {
		out = append(out, &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}})
	}
	return out
}

const (
	stageCap = csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME
	statsCap = csi.NodeServiceCapability_RPC_GET_VOLUME_STATS
)

func newFakeDriver(name string, caps ...csi.NodeServiceCapability_RPC_Type) *fakeDriver {
	return &fakeDriver{
		name: name, version: "1.0", nodeID: "node-1", caps: rpcCaps(caps...),
		staged: map[string]string{}, published: map[string]string{},
		stats: &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
			{Unit: csi.VolumeUsage_BYTES, Total: 1 << 20, Used: 1 << 10, Available: 1<<20 - 1<<10},
			{Unit: csi.VolumeUsage_INODES, Total: 100, Used: 1, Available: 99},
		}},
	}
}

// socketDir returns a short directory for sockets (a unix socket path must
// stay under 108 bytes, which t.TempDir can exceed).
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "csi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// serve starts f on the socket at path, replacing a stale socket; the test
// stops it at the end.
func (f *fakeDriver) serve(t *testing.T, path string) {
	t.Helper()
	_ = os.Remove(path)
	if f.mounts && f.root == "" {
		f.root = t.TempDir()
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listening on %s: %v", path, err)
	}
	f.srv = grpc.NewServer()
	csi.RegisterIdentityServer(f.srv, f)
	csi.RegisterNodeServer(f.srv, f)
	go func() { _ = f.srv.Serve(l) }()
	t.Cleanup(f.stop)
}

func (f *fakeDriver) stop() { f.srv.Stop() }

// record notes a call and runs the hook.
func (f *fakeDriver) record(ctx context.Context, method string, req proto.Message) error {
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{method: method, req: proto.Clone(req)})
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		return hook(ctx, method)
	}
	return nil
}

// methods lists the methods received, in order.
func (f *fakeDriver) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.method)
	}
	return out
}

// count is how many calls of method were received.
func (f *fakeDriver) count(method string) int {
	n := 0
	for _, m := range f.methods() {
		if m == method {
			n++
		}
	}
	return n
}

// last is the last request of method; nil if none.
func (f *fakeDriver) last(method string) proto.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].method == method {
			return f.calls[i].req
		}
	}
	return nil
}

func (f *fakeDriver) hasCap(c csi.NodeServiceCapability_RPC_Type) bool {
	return slices.ContainsFunc(f.caps, func(x *csi.NodeServiceCapability) bool { return x.GetRpc().GetType() == c })
}

func (f *fakeDriver) GetPluginInfo(ctx context.Context, req *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	if err := f.record(ctx, "GetPluginInfo", req); err != nil {
		return nil, err
	}
	return &csi.GetPluginInfoResponse{Name: f.name, VendorVersion: f.version}, nil
}

func (f *fakeDriver) Probe(ctx context.Context, req *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, f.record(ctx, "Probe", req)
}

func (f *fakeDriver) NodeGetInfo(ctx context.Context, req *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	if err := f.record(ctx, "NodeGetInfo", req); err != nil {
		return nil, err
	}
	resp := &csi.NodeGetInfoResponse{NodeId: f.nodeID, MaxVolumesPerNode: f.maxVolumes}
	if f.topology != nil {
		resp.AccessibleTopology = &csi.Topology{Segments: f.topology}
	}
	return resp, nil
}

func (f *fakeDriver) NodeGetCapabilities(ctx context.Context, req *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	if err := f.record(ctx, "NodeGetCapabilities", req); err != nil {
		return nil, err
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: f.caps}, nil
}

func (f *fakeDriver) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	if err := f.record(ctx, "NodeStageVolume", req); err != nil {
		return nil, err
	}
	if req.GetVolumeId() == "" || req.GetStagingTargetPath() == "" || req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume id, staging path and capability are required")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.staged[req.GetStagingTargetPath()]; ok && id != req.GetVolumeId() {
		return nil, status.Errorf(codes.AlreadyExists, "%s holds volume %s", req.GetStagingTargetPath(), id)
	}
	f.staged[req.GetStagingTargetPath()] = req.GetVolumeId()
	return &csi.NodeStageVolumeResponse{}, nil
}

func (f *fakeDriver) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if err := f.record(ctx, "NodeUnstageVolume", req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.staged[req.GetStagingTargetPath()] == req.GetVolumeId() {
		delete(f.staged, req.GetStagingTargetPath())
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

func (f *fakeDriver) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	if err := f.record(ctx, "NodePublishVolume", req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ephemeral := req.GetVolumeContext()[ephemeralKey] == "true" // never staged
	if f.hasCap(stageCap) && !ephemeral && f.staged[req.GetStagingTargetPath()] != req.GetVolumeId() {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is not staged at %q", req.GetVolumeId(), req.GetStagingTargetPath())
	}
	if err := f.publish(req.GetVolumeId(), req.GetTargetPath(), req.GetReadonly()); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	f.published[filepath.Clean(req.GetTargetPath())] = req.GetVolumeId()
	return &csi.NodePublishVolumeResponse{}, nil
}

// publish makes target show volume id: a plain directory, or with mounts
// set a bind mount of the volume's data directory.
func (f *fakeDriver) publish(id, target string, readonly bool) error {
	if !f.mounts {
		return os.MkdirAll(target, 0o750)
	}
	data := filepath.Join(f.root, hex.EncodeToString([]byte(id))) // an ID is never a path
	if err := os.MkdirAll(data, 0o750); err != nil {
		return err
	}
	return mount.BindOnce(data, target, readonly)
}

func (f *fakeDriver) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if err := f.record(ctx, "NodeUnpublishVolume", req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	remove := os.RemoveAll
	if f.mounts {
		remove = mount.UnmountAndRemove
	}
	if err := remove(req.GetTargetPath()); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	delete(f.published, filepath.Clean(req.GetTargetPath()))
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (f *fakeDriver) NodeGetVolumeStats(ctx context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if err := f.record(ctx, "NodeGetVolumeStats", req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.published[filepath.Clean(req.GetVolumePath())]; !ok {
		return nil, status.Errorf(codes.NotFound, "nothing published at %s", req.GetVolumePath())
	}
	return f.stats, nil
}

// rawCodec passes bytes through, so a server can answer what no protobuf
// decoder reads.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// serveGarbage answers every call on the socket at path with bytes that are
// not a protobuf message.
func serveGarbage(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listening on %s: %v", path, err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		var in []byte
		if err := stream.RecvMsg(&in); err != nil {
			return err
		}
		out := []byte{0xff, 0xff, 0xff, 0xff, 0x0f}
		return stream.SendMsg(&out)
	}))
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
}
