package crisetup

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Layout names the paths of a private instance under its directory.
type Layout struct {
	Dir      string
	Config   string // config.toml
	Root     string // persistent state: content, snapshots, metadata
	State    string // runtime state
	Socket   string // gRPC socket; CRI is served on it
	Log      string // containerd's stdout and stderr
	PIDFile  string // containerd's process ID
	Images   string // image archives built for import
	CNIBin   string // CNI plugin dir (links to the plugins with a pod network)
	CNIConf  string // CNI config dir
	CNIIPAM  string // host-local's address records
	Bridge   string // the Linux bridge of the pod network
	Opt      string // the opt plugin's directory
	RuncRoot string // runc's state for containers of this instance
	// RegistryHosts is CRI's registry config_path: a registry host's
	// hosts.toml goes in RegistryHosts/<host:port>/ (RegistryHostsFile).
	RegistryHosts string
}

// RegistryHostsFile is where the hosts.toml of registry host (host:port)
// goes; containerd reads it at each pull, so it may be written after the
// start.
func (l Layout) RegistryHostsFile(host string) string {
	return filepath.Join(l.RegistryHosts, host, "hosts.toml")
}

// maxSocketPath is the longest unix socket path Linux accepts (sun_path less
// its terminating NUL).
const maxSocketPath = 107

// NewLayout returns the layout of an instance under dir.
func NewLayout(dir string) (Layout, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Layout{}, fmt.Errorf("instance dir: %w", err)
	}
	l := Layout{
		Dir:      dir,
		Config:   filepath.Join(dir, "config.toml"),
		Root:     filepath.Join(dir, "root"),
		State:    filepath.Join(dir, "state"),
		Socket:   filepath.Join(dir, "containerd.sock"),
		Log:      filepath.Join(dir, "containerd.log"),
		PIDFile:  filepath.Join(dir, "containerd.pid"),
		Images:   filepath.Join(dir, "images"),
		CNIBin:   filepath.Join(dir, "cni", "bin"),
		CNIConf:  filepath.Join(dir, "cni", "net.d"),
		CNIIPAM:  filepath.Join(dir, "cni", "ipam"),
		Bridge:   bridgeName(dir),
		Opt:      filepath.Join(dir, "opt"),
		RuncRoot: filepath.Join(dir, "runc"),

		RegistryHosts: filepath.Join(dir, "certs.d"),
	}
	// containerd also listens on Socket+".ttrpc".
	if n := len(l.Socket + ".ttrpc"); n > maxSocketPath {
		return Layout{}, fmt.Errorf("instance dir %s is too long: socket path of %d bytes exceeds %d", dir, n, maxSocketPath)
	}
	return l, nil
}

// Endpoint is the CRI endpoint of the instance, as crictl and the floor
// benchmark take it.
func (l Layout) Endpoint() string { return "unix://" + l.Socket }

const (
	criSection  = `plugins."io.containerd.grpc.v1.cri"`
	cniSection  = criSection + `.cni`
	regSection  = criSection + `.registry`
	runcSection = criSection + `.containerd.runtimes.runc.options`
	optSection  = `plugins."io.containerd.internal.v1.opt"`
)

// Config rewrites the output of `containerd config default` (version 2, as
// containerd 1.6 prints it) for a private instance laid out as l:
//
//   - root, state, the gRPC socket, the CNI dirs, the opt dir and runc's root
//     all move under l.Dir;
//   - restrict_oom_score_adj = true, because these machines refuse a
//     negative oom_score_adj and every RunPodSandbox fails without it;
//   - sandbox_image is sandboxImage, an image imported locally;
//   - the streaming server takes a free port (0);
//   - network namespaces are mounted under the state dir;
//   - registry hosts are configured by the hosts.toml files under
//     l.RegistryHosts (none: every registry as containerd's default), so
//     that a test can name its own registry on loopback.
//
// Each key must be found exactly once where expected, so a containerd whose
// default config moved a key fails here rather than silently using a system
// path.
func Config(defaults []byte, l Layout, sandboxImage string) ([]byte, error) {
	edits := map[[2]string]string{
		{"", "root"}:                                 strconv.Quote(l.Root),
		{"", "state"}:                                strconv.Quote(l.State),
		{"grpc", "address"}:                          strconv.Quote(l.Socket),
		{criSection, "restrict_oom_score_adj"}:       "true",
		{criSection, "sandbox_image"}:                strconv.Quote(sandboxImage),
		{criSection, "stream_server_port"}:           strconv.Quote("0"),
		{criSection, "netns_mounts_under_state_dir"}: "true",
		{cniSection, "bin_dir"}:                      strconv.Quote(l.CNIBin),
		{cniSection, "conf_dir"}:                     strconv.Quote(l.CNIConf),
		{optSection, "path"}:                         strconv.Quote(l.Opt),
		{runcSection, "Root"}:                        strconv.Quote(l.RuncRoot),
		{regSection, "config_path"}:                  strconv.Quote(l.RegistryHosts),
	}
	applied := map[[2]string]int{}
	var out bytes.Buffer
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(defaults))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]") {
			section = strings.Trim(trimmed, "[]")
		} else if key, _, ok := strings.Cut(trimmed, "="); ok {
			k := [2]string{section, strings.TrimSpace(key)}
			if value, ok := edits[k]; ok {
				indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
				line = indent + k[1] + " = " + value
				applied[k]++
			}
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read default config: %w", err)
	}
	var problems []string
	for k := range edits {
		if n := applied[k]; n != 1 {
			problems = append(problems, fmt.Sprintf("[%s] %s found %d times", k[0], k[1], n))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("default config has an unexpected shape: %s", strings.Join(problems, "; "))
	}
	return out.Bytes(), nil
}
