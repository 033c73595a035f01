package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// driver holds what the three CSI services share.
type driver struct {
	cfg     config
	vols    volumeStore
	nodeDir string // node records, <id>.json
	locks   volumeLocks
	loops   loopDevices
	mounts  mounter
	faults  *faultInjector
	calls   *callLog
	log     *slog.Logger
}

// server is a driver serving on its unix socket.
type server struct {
	d        *driver
	grpc     *grpc.Server
	stopping chan struct{}
	done     chan error
}

// gracePeriod is how long stop lets calls in flight finish.
const gracePeriod = 10 * time.Second

// start makes the driver of cfg and serves it on cfg.endpoint; it returns
// once the socket listens.
func start(cfg config, log *slog.Logger) (*server, error) {
	for _, dir := range []string{cfg.stateDir, filepath.Join(cfg.stateDir, "volumes"), filepath.Join(cfg.stateDir, "node")} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("creating state dir: %w", err)
		}
	}
	calls, err := openCallLog(cfg.callLog)
	if err != nil {
		return nil, err
	}
	stopping := make(chan struct{})
	d := &driver{
		cfg:     cfg,
		vols:    volumeStore{dir: filepath.Join(cfg.stateDir, "volumes")},
		nodeDir: filepath.Join(cfg.stateDir, "node"),
		loops:   losetup{sysBlock: "/sys/block"},
		mounts:  newHostMounter(),
		faults:  newFaultInjector(cfg.faults, stopping),
		calls:   calls,
		log:     log,
	}
	for _, name := range cfg.volumes {
		v, err := d.createVolume(&csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{{
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		}}})
		if err != nil {
			calls.close()
			return nil, fmt.Errorf("creating volume %q of the config: %w", name, err)
		}
		log.Info("volume of the config", "name", name, "volume", v.ID)
	}
	if err := removeStaleSocket(cfg.endpoint); err != nil {
		calls.close()
		return nil, err
	}
	l, err := net.Listen("unix", cfg.endpoint)
	if err != nil {
		calls.close()
		return nil, fmt.Errorf("listening on %s: %w", cfg.endpoint, err)
	}
	g := grpc.NewServer(grpc.UnaryInterceptor(d.intercept))
	csi.RegisterIdentityServer(g, identityServer{d: d})
	csi.RegisterControllerServer(g, controllerServer{d: d})
	csi.RegisterNodeServer(g, nodeServer{d: d})
	s := &server{d: d, grpc: g, stopping: stopping, done: make(chan error, 1)}
	go func() { s.done <- g.Serve(l) }()
	log.Info("serving", "endpoint", cfg.endpoint, "driver", cfg.driverName, "node", cfg.nodeID)
	return s, nil
}

// stop ends hung calls, lets the others finish for a grace period, and
// removes the socket.
func (s *server) stop() error {
	close(s.stopping)
	graceful := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(graceful)
	}()
	select {
	case <-graceful:
	case <-time.After(gracePeriod):
		s.grpc.Stop()
	}
	err := <-s.done
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	if rerr := os.Remove(s.d.cfg.endpoint); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	if cerr := s.d.calls.close(); err == nil {
		err = cerr
	}
	return err
}

// reloadFaults takes the faults of the config file at path; a config
// that does not parse changes nothing.
func (s *server) reloadFaults(path string) {
	cfg, err := loadConfig(path)
	if err != nil {
		s.d.log.Error("faults not reloaded", "err", err)
		return
	}
	s.d.faults.replace(cfg.faults)
	s.d.log.Info("faults reloaded", "faults", len(cfg.faults))
}

// removeStaleSocket removes a socket left at path by an earlier run; it
// refuses to remove anything that is not a socket.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(filepath.Dir(path), 0o750)
	} else if err != nil {
		return fmt.Errorf("checking endpoint: %w", err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("endpoint %s exists and is not a socket", path)
	}
	return os.Remove(path)
}

// The request fields the call log records.
type (
	withVolumeID    interface{ GetVolumeId() string }
	withStagingPath interface{ GetStagingTargetPath() string }
	withTargetPath  interface{ GetTargetPath() string }
	withVolumePath  interface{ GetVolumePath() string }
	// NodeStage and NodePublish (ControllerPublish answers one).
	withPublishContext interface{ GetPublishContext() map[string]string }
	withVolumeContext  interface{ GetVolumeContext() map[string]string }
	withSecrets        interface{ GetSecrets() map[string]string }
)

// intercept applies the configured faults to each call and appends it to
// the call log. The log has the driver's answer, which a caller that gave
// up (a delay past its deadline) never saw.
func (d *driver) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	rec := callRecord{Start: time.Now().UTC(), RPC: path.Base(info.FullMethod)}
	if r, ok := req.(withVolumeID); ok {
		rec.VolumeID = r.GetVolumeId()
	}
	if r, ok := req.(*csi.CreateVolumeRequest); ok && r.GetName() != "" {
		rec.VolumeID = volumeID(r.GetName()) // the ID the name makes
	}
	if r, ok := req.(withStagingPath); ok {
		rec.StagingTargetPath = r.GetStagingTargetPath()
	}
	if r, ok := req.(withTargetPath); ok {
		rec.TargetPath = r.GetTargetPath()
	}
	if r, ok := req.(withPublishContext); ok {
		rec.PublishContext = r.GetPublishContext()
	}
	if r, ok := req.(withVolumeContext); ok {
		rec.VolumeContext = r.GetVolumeContext()
	}
	if r, ok := req.(withVolumePath); ok {
		rec.VolumePath = r.GetVolumePath()
	}
	if r, ok := req.(withSecrets); ok && len(r.GetSecrets()) > 0 {
		rec.SecretKeys = slices.Sorted(maps.Keys(r.GetSecrets()))
	}
	var unlock func()
	fault, err := d.faults.apply(ctx, rec.RPC, rec.VolumeID, func(action string) error {
		d.log.Info("fault applied", "rpc", rec.RPC, "volume", rec.VolumeID, "action", action)
		if action != string(actionDelay) || rec.VolumeID == "" {
			return nil
		}
		// A slow driver is slow with its volume locked: a call of the
		// same volume meanwhile gets ABORTED, as from a real driver.
		var lerr error
		unlock, lerr = d.locks.lock(rec.VolumeID)
		return grpcError(lerr)
	})
	if unlock != nil {
		unlock() // the handler locks the volume again for its work
	}
	if fault == string(actionDelay) {
		// A slow call finishes its work whether or not the caller waits.
		ctx = context.WithoutCancel(ctx)
	}
	var resp any
	if err == nil {
		resp, err = handler(ctx, req)
	}
	st := status.Convert(err)
	rec.End, rec.Code, rec.Message, rec.Fault = time.Now().UTC(), st.Code().String(), st.Message(), fault
	if err != nil {
		d.log.Info("call failed", "rpc", rec.RPC, "volume", rec.VolumeID, "code", rec.Code, "err", st.Message())
	}
	if lerr := d.calls.write(rec); lerr != nil {
		d.log.Error("call log", "err", lerr)
	}
	return resp, err
}
