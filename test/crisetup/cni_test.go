package crisetup

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
)

func TestPickPodSubnet(t *testing.T) {
	first, err := pickPodSubnet("/tmp/a", nil)
	if err != nil || first.Bits() != 24 || !podSubnetBase.Contains(first.Addr()) {
		t.Fatalf("pickPodSubnet = %v, %v; want a /24 of %v", first, err, podSubnetBase)
	}
	tests := []struct {
		name string
		used []netip.Prefix
		want netip.Prefix
	}{
		{"unrelated networks", []netip.Prefix{netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("10.0.0.0/24")}, first},
		{"taken: the next one", []netip.Prefix{first}, nextSubnet(first)},
		{"a host address inside it", []netip.Prefix{netip.PrefixFrom(first.Addr().Next().Next(), 32)}, nextSubnet(first)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := pickPodSubnet("/tmp/a", tt.used); err != nil || got != tt.want {
				t.Errorf("pickPodSubnet = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if _, err := pickPodSubnet("/tmp/a", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}); err == nil {
		t.Error("a covering route left a subnet free")
	}
}

func nextSubnet(p netip.Prefix) netip.Prefix {
	a := p.Addr().As4()
	a[2]++
	return netip.PrefixFrom(netip.AddrFrom4(a), 24)
}

func TestParseRoutes(t *testing.T) {
	table := `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
eth0	00000000	0100A8C0	0003	0	0	0	00000000	0	0	0
eth0	0000A8C0	00000000	0001	0	0	0	00FFFFFF	0	0	0
phbr1	00E90A0A	00000000	0001	0	0	0	00FFFFFF	0	0	0
`
	got := parseRoutes(table)
	want := []netip.Prefix{netip.MustParsePrefix("192.168.0.0/24"), netip.MustParsePrefix("10.10.233.0/24")}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("parseRoutes = %v; want %v (no default route)", got, want)
	}
}

func TestCNIConfList(t *testing.T) {
	b, err := cniConfList("podhost-x", "phbr0", netip.MustParsePrefix("10.233.7.0/24"), "/d/ipam")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Version string `json:"cniVersion"`
		Plugins []struct {
			Type      string `json:"type"`
			Bridge    string `json:"bridge"`
			IsGateway bool   `json:"isGateway"`
			IPMasq    bool   `json:"ipMasq"`
			IPAM      struct {
				Type    string `json:"type"`
				DataDir string `json:"dataDir"`
				Ranges  [][]struct{ Subnet, Gateway string }
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Version != "1.0.0" || len(conf.Plugins) != 2 || conf.Plugins[0].Type != "bridge" || conf.Plugins[1].Type != "portmap" {
		t.Fatalf("conflist %s", b)
	}
	br := conf.Plugins[0]
	if br.Bridge != "phbr0" || br.IsGateway || br.IPMasq || br.IPAM.Type != "host-local" || br.IPAM.DataDir != "/d/ipam" ||
		br.IPAM.Ranges[0][0].Subnet != "10.233.7.0/24" || br.IPAM.Ranges[0][0].Gateway != "10.233.7.1" {
		t.Errorf("bridge plugin %+v", br)
	}
}

func TestBridgeName(t *testing.T) {
	a, b := bridgeName("/tmp/TestX123/001"), bridgeName("/tmp/TestX123/002")
	if a == b || len(a) > 15 || !strings.HasPrefix(a, "phbr") {
		t.Errorf("bridge names %q %q: want distinct, at most 15 bytes, phbr…", a, b)
	}
}
