package expansion

import (
	"fmt"
	"slices"
	"strings"
)

// Expand replaces each $(NAME) in s with mapping(NAME) and each $$ with $;
// every other $ stays as written.
func Expand(s string, mapping func(name string) string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
				b.WriteString(mapping(s[i+2 : i+2+end]))
				i += 2 + end
				continue
			}
		}
		b.WriteByte('$')
	}
	return b.String()
}

// Defined is the mapping of command, args and env values: a variable of
// vars is its value, an undefined one stays as written, $(NAME).
func Defined(vars map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := vars[name]; ok {
			return v
		}
		return "$(" + name + ")"
	}
}

// SubPath expands a volumeMount's subPathExpr with the container's env
// vars. As the kubelet's, a variable it names that is undefined or empty
// is an error naming every such variable, so that a path is never built
// from a missing part (a missing annotation, say: the container waits
// until the pod has it). Whether the result is a path that stays inside
// the volume is the caller's to check.
func SubPath(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := Expand(expr, func(name string) string {
		v := vars[name]
		if v == "" && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("missing value for %s", strings.Join(missing, ", "))
	}
	return out, nil
}
