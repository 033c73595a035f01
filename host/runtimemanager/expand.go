package runtimemanager

import v1 "k8s.io/api/core/v1"

// ExpandStatic expands $(NAME) in cmd with the container's env variables
// that have a literal value (not valueFrom), as the kubelet does for the
// command of an exec probe; $$ is a literal $.
func ExpandStatic(c *v1.Container, cmd []string) []string {
	vars := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			vars[e.Name] = e.Value
		}
	}
	return expandAll(cmd, vars)
}
