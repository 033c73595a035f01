package crisetup

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"os"
	"path/filepath"
)

// CNIVersion is the version of the reference plugins hack/cni-plugins.sh
// builds by default.
const CNIVersion = "v1.10.0"

// cniPlugins are the plugins a pod network needs: containerd sets up the
// loopback interface with loopback itself, the conflist chains bridge
// (host-local addresses) and portmap.
var cniPlugins = []string{"bridge", "host-local", "loopback", "portmap"}

// cniConfName is the conflist written into CNIConf.
const cniConfName = "10-podhost-bridge.conflist"

// FindCNIPlugins returns the directory of the plugins where
// hack/cni-plugins.sh puts them: under $PODHOST_CNI_CACHE, else
// $HOME/.cache/podhost, in cni-plugins-VERSION. A missing plugin is an
// error that names the command to run.
func FindCNIPlugins() (string, error) {
	cache := os.Getenv("PODHOST_CNI_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", fmt.Errorf("finding the CNI plugins: no $PODHOST_CNI_CACHE and no home directory: %v", err)
		}
		cache = filepath.Join(home, ".cache", "podhost")
	}
	dir := filepath.Join(cache, "cni-plugins-"+CNIVersion)
	var missing []error
	for _, p := range cniPlugins {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, fmt.Errorf("%s is missing or not executable", filepath.Join(dir, p)))
		}
	}
	if len(missing) > 0 {
		return dir, fmt.Errorf("%w; build them with: sh hack/cni-plugins.sh (make cni-plugins)", errors.Join(missing...))
	}
	return dir, nil
}

// bridgeName is the Linux bridge of the instance under dir: "phbr" and a
// hash of the directory, short enough for an interface name (15 bytes).
func bridgeName(dir string) string {
	h := fnv.New32a()
	h.Write([]byte(dir))
	return fmt.Sprintf("phbr%08x", h.Sum32())
}

// podSubnetBase is the range the instances' pod subnets are taken from,
// one /24 each.
var podSubnetBase = netip.MustParsePrefix("10.233.0.0/16")

// pickPodSubnet returns the first /24 of podSubnetBase, starting at the
// one the hash of dir names, that overlaps none of used.
func pickPodSubnet(dir string, used []netip.Prefix) (netip.Prefix, error) {
	h := fnv.New32a()
	h.Write([]byte(dir))
	start := int(h.Sum32() % 256)
	base := podSubnetBase.Addr().As4()
	for i := range 256 {
		a := base
		a[2] = byte((start + i) % 256)
		p := netip.PrefixFrom(netip.AddrFrom4(a), 24)
		free := true
		for _, u := range used {
			if u.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /24 left in %s", podSubnetBase)
}

// gatewayOf is the first address of the subnet: the bridge's, through
// which the host reaches the pods.
func gatewayOf(p netip.Prefix) netip.Addr { return p.Masked().Addr().Next() }

// cniConfList renders the conflist of the pod network: a bridge that the
// instance created beforehand with the gateway address (so the plugin
// neither assigns it nor turns on IP forwarding for the whole host), no
// masquerading (pods talk to the host only), addresses from host-local
// with its state under the instance dir, and portmap for hostPorts.
func cniConfList(name, bridge string, subnet netip.Prefix, ipamDir string) ([]byte, error) {
	type obj = map[string]any
	conf := obj{
		"cniVersion": "1.0.0",
		"name":       name,
		"plugins": []obj{
			{
				"type": "bridge", "bridge": bridge, "isGateway": false, "ipMasq": false,
				"ipam": obj{
					"type":    "host-local",
					"ranges":  [][]obj{{{"subnet": subnet.String(), "gateway": gatewayOf(subnet).String()}}},
					"dataDir": ipamDir,
				},
			},
			{"type": "portmap", "capabilities": obj{"portMappings": true}},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}
