package config

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/podhost/podhost/pluginapi"
)

// Validate checks every rule of the config, including the filesystem checks
// on each plugin binary, which it looks up with stat (os.Stat if nil). Run
// it after changing a parsed config, for example after pointing PluginDir
// elsewhere. c must come from Parse or Load, which fill in the defaults. The
// error is a *ValidationError listing every problem.
func (c *HostConfig) Validate(stat StatFunc) error {
	if stat == nil {
		stat = osStat
	}
	p := &problems{}
	c.check(p, stat)
	return p.err(c.meta.sourceName())
}

func (m *meta) sourceName() string {
	if m == nil {
		return ""
	}
	return m.source
}

// check records every rule violation in p. With a nil stat it skips the
// filesystem checks.
func (c *HostConfig) check(p *problems, stat StatFunc) {
	line := c.meta.lineOf
	c.checkHeader(p)
	checkDir(p, "rootDir", line("rootDir"), c.RootDir, true)
	checkDir(p, "pluginDir", line("pluginDir"), c.PluginDir, false)
	checkDir(p, "manifestDir", line("manifestDir"), c.ManifestDir, false)
	checkDir(p, "api.socket", line("api.socket"), c.API.Socket, false)
	checkDir(p, "api.tokenFile", line("api.tokenFile"), c.API.TokenFile, c.API.TCPAddress != "")
	if c.API.TCPAddress != "" {
		if _, _, err := net.SplitHostPort(c.API.TCPAddress); err != nil {
			p.add("api.tcpAddress", line("api.tcpAddress"), nil, "want host:port, got %q", c.API.TCPAddress)
		}
	}
	if c.LogLevel != "" && !slices.Contains(LogLevels, c.LogLevel) {
		p.add("logLevel", line("logLevel"), nil, "want one of %s; got %q", strings.Join(LogLevels, ", "), c.LogLevel)
	}
	c.checkLogs(p)
	c.checkKubernetes(p, stat)
	c.checkSupervision(p)
	c.checkPlugins(p, stat)
}

func (c *HostConfig) checkHeader(p *problems) {
	line := c.meta.lineOf
	for _, f := range []struct{ path, got, want string }{
		{"apiVersion", c.APIVersion, APIVersion},
		{"kind", c.Kind, Kind},
	} {
		switch f.got {
		case f.want:
		case "":
			p.add(f.path, line(f.path), nil, "required field is missing; want %q", f.want)
		default:
			p.add(f.path, line(f.path), nil, "want %q, got %q", f.want, f.got)
		}
	}
}

// checkDir checks that a path is absolute, and set if required.
func checkDir(p *problems, path string, line int, dir string, required bool) {
	switch {
	case dir == "" && required:
		p.add(path, line, nil, "required field is missing")
	case dir != "" && !filepath.IsAbs(dir):
		p.add(path, line, nil, "want an absolute path, got %q", dir)
	}
}

func (c *HostConfig) checkSupervision(p *problems) {
	s, line := c.Supervision, c.meta.lineOf
	const b = "supervision.restartBackoff."
	for _, f := range []struct {
		path string
		d    time.Duration
	}{
		{"supervision.startTimeout", s.StartTimeout},
		{"supervision.probeInterval", s.ProbeInterval},
		{b + "initial", s.RestartBackoff.Initial},
		{b + "max", s.RestartBackoff.Max},
		{b + "resetAfter", s.RestartBackoff.ResetAfter},
	} {
		if f.d <= 0 {
			p.add(f.path, line(f.path), nil, "want a positive duration, got %s", f.d)
		}
	}
	for i, name := range c.AllowedUnsafeSysctls {
		n := strings.TrimSuffix(strings.ReplaceAll(name, "/", "."), "*")
		if !strings.HasPrefix(n, "net.") && !strings.HasPrefix(n, "kernel.shm") && !strings.HasPrefix(n, "kernel.msg") &&
			n != "kernel.sem" && !strings.HasPrefix(n, "fs.mqueue.") {
			f := fmt.Sprintf("allowedUnsafeSysctls[%d]", i)
			p.add(f, line("allowedUnsafeSysctls"), nil, "%q is not a namespaced sysctl (net.*, kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*): a pod may not change the node's", name)
		}
	}
	if r := c.SeccompProfileRoot; r != "" && !filepath.IsAbs(r) {
		p.add("seccompProfileRoot", line("seccompProfileRoot"), nil, "want an absolute path, got %q", r)
	}
	if r := c.PluginRegistrationDir; r != "" && !filepath.IsAbs(r) {
		p.add("pluginRegistrationDir", line("pluginRegistrationDir"), nil, "want an absolute path, got %q", r)
	}
	for i, ip := range c.ClusterDNS {
		if _, err := netip.ParseAddr(ip); err != nil {
			f := fmt.Sprintf("clusterDNS[%d]", i)
			p.add(f, line("clusterDNS"), nil, "want an IP address, got %q", ip)
		}
	}
	if d := c.ClusterDomain; d != "" {
		if msgs := validation.IsDNS1123Subdomain(d); len(msgs) > 0 {
			p.add("clusterDomain", line("clusterDomain"), nil, "want a DNS domain, got %q: %s", d, strings.Join(msgs, "; "))
		}
	}
	checkEvictionHard(p, c.EvictionHard, line)
	if c.EvictionPressureTransitionPeriod < 0 {
		p.add("evictionPressureTransitionPeriod", line("evictionPressureTransitionPeriod"), nil, "want a duration of 0s or more, got %s", c.EvictionPressureTransitionPeriod)
	}
	if c.ShutdownGracePeriod < 0 {
		p.add("shutdownGracePeriod", line("shutdownGracePeriod"), nil, "want a duration of 0s or more, got %s", c.ShutdownGracePeriod)
	}
	if bo := s.RestartBackoff; bo.Initial > 0 && bo.Initial > bo.Max && !p.covered(b+"max") {
		p.add(b+"initial", line(b+"initial"), nil, "%s is more than max (%s)", bo.Initial, bo.Max)
	}
}

// A plugin name is a DNS label (RFC 1123).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (c *HostConfig) checkPlugins(p *problems, stat StatFunc) {
	line := c.meta.lineOf
	names := make(map[string]string) // name → path of its first entry
	runtime := ""                    // path of the first runtime plugin
	for i, pl := range c.Plugins {
		pp := indexPath("plugins", i)
		at := func(field string) (string, int) { return pp + "." + field, line(pp + "." + field) }

		switch path, l := at("name"); {
		case pl.Name == "":
			p.add(path, l, nil, "required field is missing")
		case len(pl.Name) > 63 || !dnsLabel.MatchString(pl.Name):
			p.add(path, l, nil, "invalid name %q: want at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit", pl.Name)
		case names[pl.Name] != "":
			p.add(path, l, nil, "duplicate plugin name %q; %s has it already", pl.Name, names[pl.Name])
		default:
			names[pl.Name] = pp
		}

		switch path, l := at("kind"); {
		case pl.Kind == "":
			p.add(path, l, nil, "required field is missing; want one of %s", kindList())
		case !pl.Kind.Valid():
			if s := suggest(string(pl.Kind), kindNames()); s != "" {
				p.add(path, l, nil, "unknown kind %q (did you mean %q?)", pl.Kind, s)
				break
			}
			p.add(path, l, nil, "unknown kind %q; want one of %s", pl.Kind, kindList())
		case pl.Kind == pluginapi.KindRuntime && runtime != "":
			p.add(path, l, nil, "second runtime plugin (%s is one); want exactly one", runtime)
		case pl.Kind == pluginapi.KindRuntime:
			runtime = pp
			if pl.Required != nil && !*pl.Required {
				path, l := at("required")
				p.add(path, l, nil, "a runtime plugin cannot be optional: no pod runs without one")
			}
		}

		if path, l := at("sha256"); pl.SHA256 != "" {
			if _, err := hex.DecodeString(pl.SHA256); err != nil || len(pl.SHA256) != 64 {
				p.add(path, l, nil, "want 64 hex digits, got %d characters %q", len(pl.SHA256), truncate(pl.SHA256))
			}
		}

		path, l := at("path")
		switch {
		case pl.Path == "":
			p.add(path, l, nil, "required field is missing")
		case !filepath.IsAbs(pl.Path) && c.PluginDir == "":
			p.add(path, l, nil, "relative path %q needs pluginDir", pl.Path)
		case stat != nil && !p.covered("pluginDir"):
			checkBinary(p, path, l, c.resolve(pl.Path), stat)
		}
	}
	if runtime == "" && !c.anyCovered(p) {
		p.add("plugins", line("plugins"), nil, "want exactly one runtime plugin, got none")
	}
}

// anyCovered reports whether the kind of some plugin entry failed to decode,
// so that the missing runtime may be a consequence.
func (c *HostConfig) anyCovered(p *problems) bool {
	if p.covered("plugins") {
		return true
	}
	for i := range c.Plugins {
		if p.covered(indexPath("plugins", i) + ".kind") {
			return true
		}
	}
	return false
}

// resolve makes a plugin path absolute against PluginDir.
func (c *HostConfig) resolve(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(c.PluginDir, path)
}

func kindNames() []string {
	var s []string
	for _, k := range pluginapi.Kinds {
		s = append(s, string(k))
	}
	return s
}

func kindList() string {
	var s []string
	for _, k := range kindNames() {
		s = append(s, fmt.Sprintf("%q", k))
	}
	return strings.Join(s, ", ")
}

func truncate(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
