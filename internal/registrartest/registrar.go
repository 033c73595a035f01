// Package registrartest is a plugin registrar for tests: the registration
// side of node-driver-registrar, written against the upstream kubelet
// plugin registration API (k8s.io/kubelet/pkg/apis/pluginregistration/v1).
// It serves GetInfo with a given answer on a unix socket and reports each
// NotifyRegistrationStatus it receives. Tests of the host's registration
// watcher (host/pluginregistration) and the e2e tests import it, in place
// of node-driver-registrar, which is not on the module proxy; no other
// code may.
package registrartest

import (
	"context"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// CSIInfo is what node-driver-registrar answers for CSI driver name served
// at endpoint.
func CSIInfo(name, endpoint string) *registerapi.PluginInfo {
	return &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: name, Endpoint: endpoint, SupportedVersions: []string{"1.0.0"}}
}

// Registrar serves the Registration service on one socket.
type Registrar struct {
	registerapi.UnimplementedRegistrationServer
	info   *registerapi.PluginInfo
	status chan *registerapi.RegistrationStatus
	srv    *grpc.Server
	path   string
	done   chan struct{}
}

// Serve listens at path and answers GetInfo with info.
func Serve(path string, info *registerapi.PluginInfo) (*Registrar, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("registrar at %s: %w", path, err)
	}
	r := &Registrar{info: info, status: make(chan *registerapi.RegistrationStatus, 16), srv: grpc.NewServer(), path: path, done: make(chan struct{})}
	registerapi.RegisterRegistrationServer(r.srv, r)
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(l)
	}()
	return r, nil
}

func (r *Registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return r.info, nil
}

func (r *Registrar) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	select {
	case r.status <- s:
	default:
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// Status waits for the next NotifyRegistrationStatus, until ctx ends.
func (r *Registrar) Status(ctx context.Context) (*registerapi.RegistrationStatus, error) {
	select {
	case s := <-r.status:
		return s, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("registrar at %s: no registration status: %w", r.path, ctx.Err())
	}
}

// Stop stops serving and removes the socket, as a registrar that exits
// does.
func (r *Registrar) Stop() {
	r.srv.Stop()
	<-r.done
	_ = os.Remove(r.path)
}
