package kubenode

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The beta OS and arch labels, which kubelets still set.
const (
	labelOSBeta   = "beta.kubernetes.io/os"
	labelArchBeta = "beta.kubernetes.io/arch"
)

// selfLabels are the labels in the kubernetes.io and k8s.io namespaces that
// NodeRestriction lets a node set on itself; selfLabelNamespaces are the
// namespaces whose labels (and their subdomains') it may set.
var (
	selfLabels = map[string]bool{
		v1.LabelHostname: true, v1.LabelOSStable: true, v1.LabelArchStable: true,
		labelOSBeta: true, labelArchBeta: true,
		v1.LabelTopologyZone: true, v1.LabelTopologyRegion: true,
		v1.LabelFailureDomainBetaZone: true, v1.LabelFailureDomainBetaRegion: true,
		v1.LabelInstanceType: true, v1.LabelInstanceTypeStable: true,
	}
	selfLabelNamespaces = []string{"kubelet.kubernetes.io", "node.kubernetes.io"}
)

// nodeLabels are the labels the agent owns on its Node: the kubelet's
// defaults for this machine, then the configured ones over them.
func nodeLabels(hostname string, extra map[string]string) map[string]string {
	l := map[string]string{
		v1.LabelHostname:   hostname,
		v1.LabelOSStable:   runtime.GOOS,
		v1.LabelArchStable: runtime.GOARCH,
		labelOSBeta:        runtime.GOOS,
		labelArchBeta:      runtime.GOARCH,
	}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// checkLabel says why a node could not set the label k=v on itself.
func checkLabel(k, v string) error {
	if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
		return fmt.Errorf("not a label key: %s", strings.Join(msgs, "; "))
	}
	if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
		return fmt.Errorf("value %q: %s", v, strings.Join(msgs, "; "))
	}
	ns, _, _ := strings.Cut(k, "/")
	if !strings.Contains(k, "/") {
		ns = ""
	}
	if inNamespace(ns, "node-restriction.kubernetes.io") {
		return errors.New("a node may not set labels in node-restriction.kubernetes.io on itself")
	}
	if (inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io")) && !selfLabels[k] {
		for _, allowed := range selfLabelNamespaces {
			if inNamespace(ns, allowed) {
				return nil
			}
		}
		return fmt.Errorf("NodeRestriction lets a node set only its kubelet's labels in %s, and those under %s", ns, strings.Join(selfLabelNamespaces, ", "))
	}
	return nil
}

// inNamespace reports whether the label namespace ns is parent or one of
// its subdomains.
func inNamespace(ns, parent string) bool {
	return ns == parent || strings.HasSuffix(ns, "."+parent)
}

// hostnameOf is the Hostname address, else the node name.
func hostnameOf(addrs []v1.NodeAddress, nodeName string) string {
	for _, a := range addrs {
		if a.Type == v1.NodeHostName {
			return a.Address
		}
	}
	return nodeName
}
