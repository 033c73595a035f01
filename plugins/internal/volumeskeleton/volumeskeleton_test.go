package volumeskeleton

import (
	"sync/atomic"
	"testing"

	"github.com/podhost/podhost/sdk"
)

func TestConfigure(t *testing.T) {
	var cfg atomic.Pointer[string]
	configure := Configure(&cfg, func(raw []byte) (string, []sdk.FieldError) {
		if string(raw) == "bad" {
			return "", []sdk.FieldError{{Field: "f", Message: "is bad"}}
		}
		return string(raw), nil
	})
	if errs := configure(t.Context(), []byte("good")); errs != nil {
		t.Fatalf("Configure(good): got %v; want no errors", errs)
	}
	if got := cfg.Load(); got == nil || *got != "good" {
		t.Fatalf("after Configure(good): got %v; want good", got)
	}
	if errs := configure(t.Context(), []byte("bad")); len(errs) != 1 || errs[0].Error() != "f: is bad" {
		t.Errorf("Configure(bad): got %v; want [f: is bad]", errs)
	}
	if got := cfg.Load(); got == nil || *got != "good" {
		t.Errorf("after Configure(bad): got %v; want good kept", got)
	}
}
