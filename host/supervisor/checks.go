package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

// check runs the start checks on a freshly launched plugin, in the order
// the Identity contract gives: GetInfo, Configure, Probe. GetInfo or
// Configure failing refuses the plugin. Probe never refuses it: a plugin
// that answers not ready, or whose Probe fails, is started and marked not
// ready, and the periodic probe marks it ready once it recovers.
func (l *launcher) check(ctx context.Context, id pluginv1.IdentityClient) (inStarted, error) {
	name := l.spec.Name
	callErr := func(step string, err error) error {
		if errors.Is(err, ErrPluginExited) {
			return fmt.Errorf("launch plugin %q: %s: %w", name, step, err)
		}
		return refused(name, err, "failed %s: %v", step, err)
	}

	callCtx, cancel := context.WithTimeout(ctx, l.opts.StartTimeout)
	info, err := id.GetInfo(callCtx, &pluginv1.GetInfoRequest{})
	cancel()
	if err != nil {
		return inStarted{}, callErr("GetInfo", err)
	}
	if err := checkInfo(l.spec, info); err != nil {
		return inStarted{}, err
	}

	config := l.spec.Config
	if len(config) == 0 {
		config = []byte("{}")
	}
	callCtx, cancel = context.WithTimeout(ctx, l.opts.StartTimeout)
	cfg, err := id.Configure(callCtx, &pluginv1.ConfigureRequest{ConfigJson: config, HostVersion: l.opts.HostVersion})
	cancel()
	if err != nil {
		return inStarted{}, callErr("Configure", err)
	}
	if fes := cfg.GetErrors(); len(fes) > 0 {
		return inStarted{}, refused(name, nil, "rejected its config: %s", formatFieldErrors(fes))
	}

	started := inStarted{version: info.GetPluginVersion(), capabilities: info.GetCapabilities()}
	callCtx, cancel = context.WithTimeout(ctx, l.opts.StartTimeout)
	started.ready, started.notReady, err = probe(callCtx, id)
	cancel()
	if errors.Is(err, ErrPluginExited) {
		return inStarted{}, callErr("Probe", err)
	}
	return started, nil
}

// checkInfo refuses a plugin whose GetInfo does not match its spec.
func checkInfo(spec PluginSpec, info *pluginv1.GetInfoResponse) error {
	if kind, ok := pluginapi.KindOf(info.GetKind()); !ok {
		return refused(spec.Name, nil, "declares no known kind (%s), spec declares %s", info.GetKind(), spec.Kind)
	} else if kind != spec.Kind {
		return refused(spec.Name, nil, "is a %s plugin, spec declares %s", kind, spec.Kind)
	}
	if !slices.Contains(info.GetContractVersions(), pluginapi.ContractVersion) {
		return refused(spec.Name, nil, "speaks contract versions [%s], host needs %s",
			strings.Join(info.GetContractVersions(), ", "), pluginapi.ContractVersion)
	}
	return nil
}

func formatFieldErrors(fes []*pluginv1.FieldError) string {
	parts := make([]string, 0, len(fes))
	for _, fe := range fes {
		if fe.GetField() == "" {
			parts = append(parts, fe.GetMessage()) // the config as a whole
			continue
		}
		parts = append(parts, fe.GetField()+": "+fe.GetMessage())
	}
	return strings.Join(parts, "; ")
}

// probe calls Probe. It returns ready, and when not ready a description of
// why; err is only the call's error (already folded into notReady).
func probe(ctx context.Context, id pluginv1.IdentityClient) (ready bool, notReady string, err error) {
	resp, err := id.Probe(ctx, &pluginv1.ProbeRequest{})
	switch {
	case err != nil:
		return false, fmt.Sprintf("probe failed: %v", err), err
	case !resp.GetReady():
		return false, fmt.Sprintf("probe: not ready: %s", resp.GetMessage()), nil
	}
	return true, "", nil
}
