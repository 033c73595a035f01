package runtimemanager

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Service links: the environment variables the kubelet gives every
// container of a pod for the services of its namespace (when the pod's
// enableServiceLinks is true, the API server's default) and, always, for
// the master service "kubernetes" of namespace default. A node without an
// API server has no services and gives none, as a kubelet without one.
// The variables are Docker's link variables as the kubelet writes them:
// <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT[_<PORTNAME>], <NAME>_PORT and
// <NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]. They come after the
// container's own variables, which win, and $(VAR) may refer to them.

// masterService is the service every pod gets the variables of.
const masterService = "kubernetes"

// serviceEnv are the service link variables of a pod whose containers
// objs reads for, services sorted by name.
func (o *envObjects) serviceEnv(pod *v1.Pod) ([]keyValue, error) {
	if o.src == nil {
		return nil, nil
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	chosen := map[string]*v1.Service{}
	add := func(namespace string, keep func(*v1.Service) bool) error {
		list, err := o.src.Services(o.ctx, namespace)
		if err != nil {
			return fmt.Errorf("listing the services of namespace %s for the service links: %w", namespace, err)
		}
		for i := range list {
			s := &list[i]
			if serviceIPSet(s) && keep(s) {
				chosen[s.Name] = s // the pod's namespace, listed last, wins
			}
		}
		return nil
	}
	if err := add(v1.NamespaceDefault, func(s *v1.Service) bool {
		return s.Name == masterService || (links && pod.Namespace == v1.NamespaceDefault)
	}); err != nil {
		return nil, err
	}
	if links && pod.Namespace != v1.NamespaceDefault {
		if err := add(pod.Namespace, func(*v1.Service) bool { return true }); err != nil {
			return nil, err
		}
	}
	services := make([]*v1.Service, 0, len(chosen))
	for _, s := range chosen {
		services = append(services, s)
	}
	slices.SortFunc(services, func(a, b *v1.Service) int { return cmp.Compare(a.Name, b.Name) })
	var out []keyValue
	for _, s := range services {
		out = append(out, serviceVariables(s)...)
	}
	return out, nil
}

// serviceIPSet: a service with a cluster IP (not headless).
func serviceIPSet(s *v1.Service) bool {
	return s.Spec.ClusterIP != "" && s.Spec.ClusterIP != v1.ClusterIPNone && len(s.Spec.Ports) > 0
}

// serviceVariables are one service's link variables.
func serviceVariables(s *v1.Service) []keyValue {
	prefix := envName(s.Name)
	ip := s.Spec.ClusterIP
	out := []keyValue{
		{prefix + "_SERVICE_HOST", ip},
		{prefix + "_SERVICE_PORT", strconv.Itoa(int(s.Spec.Ports[0].Port))},
	}
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			out = append(out, keyValue{prefix + "_SERVICE_PORT_" + envName(p.Name), strconv.Itoa(int(p.Port))})
		}
	}
	for i, p := range s.Spec.Ports {
		proto := string(p.Protocol)
		if proto == "" {
			proto = string(v1.ProtocolTCP)
		}
		port := strconv.Itoa(int(p.Port))
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			out = append(out, keyValue{prefix + "_PORT", url})
		}
		pp := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
		out = append(out,
			keyValue{pp, url},
			keyValue{pp + "_PROTO", strings.ToLower(proto)},
			keyValue{pp + "_PORT", port},
			keyValue{pp + "_ADDR", ip},
		)
	}
	return out
}

// envName is a service or port name as a variable name: upper case, "-"
// as "_".
func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
