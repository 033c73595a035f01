package sdk

import (
	"context"
	"encoding/json"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

// identity serves pluginv1.Identity from a Plugin description.
type identity struct {
	pluginv1.UnimplementedIdentityServer
	p Plugin
}

func (s *identity) GetInfo(context.Context, *pluginv1.GetInfoRequest) (*pluginv1.GetInfoResponse, error) {
	versions := s.p.ContractVersions
	if len(versions) == 0 {
		versions = []string{pluginapi.ContractVersion}
	}
	return &pluginv1.GetInfoResponse{
		Name:             s.p.Name,
		Kind:             s.p.Kind.Proto(),
		PluginVersion:    s.p.Version,
		ContractVersions: versions,
		Capabilities:     s.p.Capabilities,
	}, nil
}

func (s *identity) Probe(ctx context.Context, _ *pluginv1.ProbeRequest) (*pluginv1.ProbeResponse, error) {
	if s.p.Probe == nil {
		return &pluginv1.ProbeResponse{Ready: true}, nil
	}
	ready, msg := s.p.Probe(ctx)
	return &pluginv1.ProbeResponse{Ready: ready, Message: msg}, nil
}

func (s *identity) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	raw := json.RawMessage(req.GetConfigJson())
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if !json.Valid(raw) {
		return &pluginv1.ConfigureResponse{Errors: []*pluginv1.FieldError{{Field: "config", Message: "is not valid JSON"}}}, nil
	}
	if s.p.Configure == nil {
		return &pluginv1.ConfigureResponse{}, nil
	}
	var out []*pluginv1.FieldError
	for _, fe := range s.p.Configure(ctx, raw) {
		out = append(out, &pluginv1.FieldError{Field: fe.Field, Message: fe.Message})
	}
	return &pluginv1.ConfigureResponse{Errors: out}, nil
}

var _ pluginv1.IdentityServer = (*identity)(nil)
