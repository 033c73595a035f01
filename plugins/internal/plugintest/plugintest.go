// Package plugintest holds the unit tests the plugins under plugins/ run
// alike: that a plugin is servable, and the table test of its config
// parser. Only tests import it.
package plugintest

import (
	"reflect"
	"testing"

	"github.com/podhost/podhost/sdk"
)

// CheckServable checks that newPlugin describes a plugin named name of kind
// kind, with the version it is given, which the SDK can serve.
func CheckServable(t *testing.T, newPlugin func(version string) sdk.Plugin, name string, kind sdk.Kind) {
	t.Helper()
	p := newPlugin("1.2.3")
	if p.Name != name || p.Kind != kind || p.Version != "1.2.3" {
		t.Errorf("got name %q kind %q version %q; want %q %q %q", p.Name, p.Kind, p.Version, name, kind, "1.2.3")
	}
	if _, err := sdk.ServeConfig(p); err != nil {
		t.Errorf("ServeConfig: %v", err)
	}
}

// ConfigCase is one config a plugin's parser is given, and what it must
// answer: Want and no errors, or the zero config and WantErrs.
type ConfigCase[T any] struct {
	Name     string
	Config   string
	Want     T
	WantErrs []string
}

// RunConfigCases runs parse on each case's config in a subtest named after
// the case, and checks the errors, as strings, and the config it returns.
func RunConfigCases[T any](t *testing.T, parse func([]byte) (T, []sdk.FieldError), tests []ConfigCase[T]) {
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			got, errs := parse([]byte(tt.Config))
			var gotErrs []string
			for _, e := range errs {
				gotErrs = append(gotErrs, e.Error())
			}
			if !reflect.DeepEqual(gotErrs, tt.WantErrs) {
				t.Errorf("errors: got %q; want %q", gotErrs, tt.WantErrs)
			}
			if !reflect.DeepEqual(got, tt.Want) {
				t.Errorf("config: got %+v; want %+v", got, tt.Want)
			}
		})
	}
}
