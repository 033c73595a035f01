package crisetup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// cniLockPath serialises the choice of a subnet and the creation of the
// bridge among the instances on this machine, whichever process starts
// them.
const cniLockPath = "/run/lock/podhost-crisetup-cni.lock"

// setupPodNetwork gives the instance a pod network: the plugins linked
// into CNIBin, a bridge of its own holding the gateway address of a free
// /24 (its ifalias is the instance dir, so that a later start removes
// the bridge of an instance whose dir is gone), and the conflist in
// CNIConf. It runs before containerd starts, which then reports the
// network ready.
func setupPodNetwork(ctx context.Context, l Layout) (netip.Prefix, error) {
	plugins, err := FindCNIPlugins()
	if err != nil {
		return netip.Prefix{}, err
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return netip.Prefix{}, fmt.Errorf("ip not found (%s): %w", installHint, err)
	}
	for _, p := range cniPlugins {
		link := filepath.Join(l.CNIBin, p)
		_ = os.Remove(link)
		if err := os.Symlink(filepath.Join(plugins, p), link); err != nil {
			return netip.Prefix{}, fmt.Errorf("link CNI plugin: %w", err)
		}
	}
	unlock, err := lockFile(cniLockPath)
	if err != nil {
		return netip.Prefix{}, err
	}
	defer unlock()
	removeStaleBridges(ctx)
	used, err := usedPrefixes()
	if err != nil {
		return netip.Prefix{}, err
	}
	subnet, err := pickPodSubnet(l.Dir, used)
	if err != nil {
		return netip.Prefix{}, err
	}
	br := l.Bridge
	gw := netip.PrefixFrom(gatewayOf(subnet), subnet.Bits())
	_ = ipCommand(ctx, "link", "delete", br) // a leftover of the same dir
	for _, args := range [][]string{
		{"link", "add", br, "type", "bridge"},
		{"link", "set", br, "alias", l.Dir},
		{"addr", "add", gw.String(), "dev", br},
		{"link", "set", br, "up"},
	} {
		if err := ipCommand(ctx, args...); err != nil {
			_ = ipCommand(ctx, "link", "delete", br)
			return netip.Prefix{}, err
		}
	}
	conf, err := cniConfList("podhost-"+br, br, subnet, l.CNIIPAM)
	if err == nil {
		err = os.WriteFile(filepath.Join(l.CNIConf, cniConfName), conf, 0o600)
	}
	if err != nil {
		_ = ipCommand(ctx, "link", "delete", br)
		return netip.Prefix{}, fmt.Errorf("write CNI config: %w", err)
	}
	return subnet, nil
}

// teardownPodNetwork removes the instance's bridge, once every sandbox
// (and with it every veth on the bridge) is gone.
func teardownPodNetwork(ctx context.Context, l Layout) error {
	if _, err := os.Stat(filepath.Join("/sys/class/net", l.Bridge)); err != nil {
		return nil
	}
	return ipCommand(ctx, "link", "delete", l.Bridge)
}

// removeStaleBridges deletes the bridges of instances whose dir is gone
// (a test binary killed before its cleanup).
func removeStaleBridges(ctx context.Context) {
	links, _ := filepath.Glob("/sys/class/net/phbr*")
	for _, link := range links {
		alias, err := os.ReadFile(filepath.Join(link, "ifalias"))
		dir := strings.TrimSpace(string(alias))
		if err != nil || !strings.HasPrefix(dir, "/") {
			continue
		}
		if _, err := os.Stat(filepath.Join(link, "bridge")); err != nil {
			continue
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			_ = ipCommand(ctx, "link", "delete", filepath.Base(link))
		}
	}
}

// usedPrefixes are the networks of the host's addresses and routes, which
// a pod subnet must not overlap.
func usedPrefixes() ([]netip.Prefix, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list host addresses: %w", err)
	}
	var used []netip.Prefix
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if p, err := netip.ParsePrefix(n.String()); err == nil {
				used = append(used, p.Masked())
			}
		}
	}
	routes, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return nil, fmt.Errorf("read routes: %w", err)
	}
	return append(used, parseRoutes(string(routes))...), nil
}

// parseRoutes returns the destinations of /proc/net/route other than the
// default route.
func parseRoutes(table string) []netip.Prefix {
	var out []netip.Prefix
	sc := bufio.NewScanner(strings.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[0] == "Iface" {
			continue
		}
		dst, err1 := strconv.ParseUint(f[1], 16, 32)
		mask, err2 := strconv.ParseUint(f[7], 16, 32)
		if err1 != nil || err2 != nil || mask == 0 {
			continue
		}
		// The table holds addresses in host (little-endian) byte order.
		d := [4]byte{byte(dst), byte(dst >> 8), byte(dst >> 16), byte(dst >> 24)}
		bits := 0
		for m := uint32(mask); m != 0; m >>= 1 {
			bits += int(m & 1)
		}
		out = append(out, netip.PrefixFrom(netip.AddrFrom4(d), bits).Masked())
	}
	return out
}

func ipCommand(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// lockFile takes an exclusive flock on path and returns its release.
func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// PodGateway is the host's address on the pod network (WithPodNetwork):
// the bridge's, which pods reach the host at. Zero without a pod network.
func (c *Containerd) PodGateway() netip.Addr {
	if !c.PodSubnet.IsValid() {
		return netip.Addr{}
	}
	return gatewayOf(c.PodSubnet)
}
