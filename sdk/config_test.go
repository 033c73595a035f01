package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type testDriver struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
}

type testLimits struct {
	MaxVolumes uint8 `json:"maxVolumes"`
}

type testEmbedded struct {
	Zone string `json:"zone"`
}

type testConfig struct {
	testEmbedded
	Endpoint string            `json:"endpoint"`
	Timeout  Duration          `json:"timeout"`
	Retries  int               `json:"retries"`
	Ratio    float64           `json:"ratio,omitempty"`
	Debug    bool              `json:"debug"`
	Drivers  []testDriver      `json:"drivers"`
	Labels   map[string]string `json:"labels"`
	Limits   *testLimits       `json:"limits"`
	Extra    any               `json:"extra"`
	Ignored  string            `json:"-"`
	Plain    string
}

func TestDecodeConfig(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		want     testConfig
		wantErrs []string
	}{
		{name: "empty is the empty object", config: "", want: testConfig{Endpoint: "default"}},
		{name: "empty object keeps defaults", config: " {} ", want: testConfig{Endpoint: "default"}},
		{
			name:   "every kind of field",
			config: `{"zone":"a","endpoint":"unix:///x","timeout":"1m30s","retries":-3,"ratio":0.5,"debug":true,"drivers":[{"name":"d","endpoint":"e"}],"labels":{"k":"v"},"limits":{"maxVolumes":7},"extra":{"x":[1]},"Plain":"p"}`,
			want: testConfig{
				testEmbedded: testEmbedded{Zone: "a"},
				Endpoint:     "unix:///x", Timeout: Duration(90 * time.Second), Retries: -3, Ratio: 0.5, Debug: true,
				Drivers: []testDriver{{Name: "d", Endpoint: "e"}},
				Labels:  map[string]string{"k": "v"},
				Limits:  &testLimits{MaxVolumes: 7},
				Extra:   map[string]any{"x": []any{1.0}},
				Plain:   "p",
			},
		},
		{name: "null keeps the default", config: `{"endpoint":null}`, want: testConfig{Endpoint: "default"}},
		{name: "unknown field", config: `{"endpoit":"x"}`, want: testConfig{Endpoint: "default"}, wantErrs: []string{"endpoit: unknown field"}},
		{name: "names match exactly", config: `{"Endpoint":"x"}`, want: testConfig{Endpoint: "default"}, wantErrs: []string{"Endpoint: unknown field"}},
		{name: "ignored field is unknown", config: `{"Ignored":"x","-":"y"}`, want: testConfig{Endpoint: "default"}, wantErrs: []string{"Ignored: unknown field", "-: unknown field"}},
		{
			name:     "unknown field in a list element",
			config:   `{"drivers":[{"name":"a"},{"name":"b","endpoit":"x"}]}`,
			want:     testConfig{Endpoint: "default", Drivers: []testDriver{{Name: "a"}, {Name: "b"}}},
			wantErrs: []string{"drivers[1].endpoit: unknown field"},
		},
		{
			name:     "wrong types, in document order",
			config:   `{"timeout":30,"endpoint":1,"debug":"yes","drivers":{},"labels":[],"retries":"3","limits":{"maxVolumes":"x"}}`,
			want:     testConfig{Endpoint: "default", Limits: &testLimits{}},
			wantErrs: []string{`timeout: want a duration string such as "30s", got number`, "endpoint: want a string, got number", "debug: want a boolean, got string", "drivers: want an array, got object", "labels: want an object, got array", "retries: want an integer, got string", "limits.maxVolumes: want a non-negative integer, got string"},
		},
		{
			name:     "bad numbers",
			config:   `{"retries":1.5,"limits":{"maxVolumes":300},"ratio":"x"}`,
			want:     testConfig{Endpoint: "default", Limits: &testLimits{}},
			wantErrs: []string{"retries: want an integer, got 1.5", "limits.maxVolumes: 300 is out of range", "ratio: want a number, got string"},
		},
		{name: "negative unsigned", config: `{"limits":{"maxVolumes":-1}}`, want: testConfig{Endpoint: "default", Limits: &testLimits{}}, wantErrs: []string{"limits.maxVolumes: want a non-negative integer, got -1"}},
		{name: "bad duration", config: `{"timeout":"soon"}`, want: testConfig{Endpoint: "default"}, wantErrs: []string{`timeout: want a duration such as "30s", got "soon"`}},
		{name: "duplicate field", config: `{"endpoint":"a","endpoint":"b"}`, want: testConfig{Endpoint: "a"}, wantErrs: []string{"endpoint: duplicate field"}},
		{name: "map value of wrong type", config: `{"labels":{"a.b":1,"ok":2}}`, want: testConfig{Endpoint: "default", Labels: map[string]string{"a.b": "", "ok": ""}}, wantErrs: []string{`labels["a.b"]: want a string, got number`, "labels.ok: want a string, got number"}},
		{name: "not an object", config: `[]`, want: testConfig{Endpoint: "default"}, wantErrs: []string{"want an object, got array"}},
		{name: "invalid JSON", config: `{"endpoint":`, want: testConfig{Endpoint: "default"}, wantErrs: []string{"invalid JSON: unexpected end of JSON input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testConfig{Endpoint: "default"}
			errs := DecodeConfig([]byte(tt.config), &got)
			if gotErrs := errorStrings(errs); !reflect.DeepEqual(gotErrs, tt.wantErrs) {
				t.Errorf("errors: got %q; want %q", gotErrs, tt.wantErrs)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("config: got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeConfigTarget(t *testing.T) {
	tests := []struct {
		name   string
		target any
		config string
		want   string
	}{
		{name: "nil", target: nil, want: "cannot decode into <nil>: want a non-nil pointer"},
		{name: "not a pointer", target: testConfig{}, want: "cannot decode into sdk.testConfig: want a non-nil pointer"},
		{name: "unsupported field type", target: &struct {
			C chan int `json:"c"`
		}{}, config: `{"c":1}`, want: "c: cannot decode into Go type chan int"},
		{name: "non-string map keys", target: &struct {
			M map[int]string `json:"m"`
		}{}, config: `{"m":{}}`, want: "m: cannot decode into Go type map[int]string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := DecodeConfig([]byte(tt.config), tt.target)
			if got := strings.Join(errorStrings(errs), "; "); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestFieldErrors(t *testing.T) {
	var errs FieldErrors
	errs.Addf("drivers[%d].name", "must be unique")
	errs.Addf("drivers[1].name", "%q is used by drivers[%d]", "a", 0)
	want := []string{"drivers[%d].name: must be unique", `drivers[1].name: "a" is used by drivers[0]`}
	if got := errorStrings(errs); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
}

func errorStrings(errs []FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// FuzzDecodeConfig checks that DecodeConfig never panics, that every error
// names a problem, and that a config it accepts decodes exactly as
// encoding/json decodes it.
func FuzzDecodeConfig(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `[]`, `null`, `{"endpoint":"x","timeout":"3s"}`,
		`{"drivers":[{"name":"a","endpoint":"unix:///a"},{"name":"b","endpoit":1}]}`,
		`{"labels":{"a":"b","a.b":"c"},"limits":{"maxVolumes":255},"extra":[null,true,{"k":1e400}]}`,
		`{"retries":-9223372036854775808,"ratio":1e308,"zone":"\u00e9\ud800"}`,
		`{"limits":null,"drivers":null,"labels":{"x":null}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, config []byte) {
		var got testConfig
		errs := DecodeConfig(config, &got)
		for _, e := range errs {
			if e.Message == "" {
				t.Fatalf("error without a message at %q", e.Field)
			}
		}
		if len(errs) > 0 {
			return
		}
		var want testConfig
		if err := json.Unmarshal(config, &want); err != nil && strings.TrimSpace(string(config)) != "" {
			t.Fatalf("DecodeConfig accepted %q; encoding/json: %v", config, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeConfig(%q) = %+v; encoding/json gives %+v", config, got, want)
		}
	})
}
