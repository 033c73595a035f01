package config

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// EvictionSignals are the signals evictionHard may name, the kubelet's.
var EvictionSignals = []string{"imagefs.available", "imagefs.inodesFree", "memory.available", "nodefs.available", "nodefs.inodesFree"}

// checkEvictionHard checks that each threshold names a signal of
// EvictionSignals and is a non-negative quantity or a percentage from 0%
// to 100%.
func checkEvictionHard(p *problems, hard map[string]string, line func(string) int) {
	keys := make([]string, 0, len(hard))
	for k := range hard {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, sig := range keys {
		path, v := "evictionHard."+sig, hard[sig]
		if !slices.Contains(EvictionSignals, sig) {
			p.add(path, line(path), nil, "unknown signal %q: want one of %s", sig, strings.Join(EvictionSignals, ", "))
			continue
		}
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			if f, err := strconv.ParseFloat(pct, 64); err != nil || f < 0 || f > 100 {
				p.add(path, line(path), nil, "want a percentage from 0%% to 100%%, got %q", v)
			}
			continue
		}
		if q, err := resource.ParseQuantity(v); err != nil || q.Sign() < 0 {
			p.add(path, line(path), nil, "want a quantity of 0 or more (100Mi) or a percentage (10%%), got %q", v)
		}
	}
}
