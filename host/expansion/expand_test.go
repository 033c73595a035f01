package expansion

import "testing"

func TestExpandDefined(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "$(A)", "E": ""}
	tests := map[string]string{
		"$(A)-$(B)":  "x-$(A)",
		"$$(A)":      "$(A)",
		"$(MISSING)": "$(MISSING)",
		"$(E)":       "",
		"$(A":        "$(A",
		"$(":         "$(",
		"cost $5":    "cost $5",
		"end$":       "end$",
		"$$$(A)":     "$x",
		"no refs":    "no refs",
	}
	for in, want := range tests {
		if got := Expand(in, Defined(vars)); got != want {
			t.Errorf("Expand(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestSubPath(t *testing.T) {
	vars := map[string]string{"POD_NAME": "web-0", "NS": "default", "EMPTY": "", "DOTS": "..", "ABS": "/tmp"}
	tests := []struct {
		expr, want, err string
	}{
		{"$(POD_NAME)", "web-0", ""},
		{"$(NS)/$(POD_NAME)", "default/web-0", ""},
		{"logs/$(POD_NAME).d", "logs/web-0.d", ""},
		{"$$(POD_NAME)", "$(POD_NAME)", ""},
		{"plain", "plain", ""},
		// the checks of the path are the caller's: these expand
		{"$(DOTS)", "..", ""},
		{"$(ABS)", "/tmp", ""},
		{"$(UNDEFINED)", "", "missing value for UNDEFINED"},
		{"$(EMPTY)/$(POD_NAME)", "", "missing value for EMPTY"},
		{"$(Z)/$(A)/$(Z)", "", "missing value for A, Z"},
	}
	for _, tt := range tests {
		got, err := SubPath(tt.expr, vars)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("SubPath(%q) = %q, %v; want error %q", tt.expr, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("SubPath(%q) = %q, %v; want %q", tt.expr, got, err, tt.want)
		}
	}
}
