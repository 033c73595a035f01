package sdk

import (
	"context"
	"encoding/json"
	"sync/atomic"
)

// ConfigValidator is a config type that checks itself once DecodeConfig
// accepted its shape, adding what is wrong to errs with each field's path.
type ConfigValidator interface {
	Validate(errs *FieldErrors)
}

// Config holds a plugin's config, a T, safe for concurrent use: the
// defaults until Configure accepts a config, then the config accepted last.
type Config[T any] struct {
	defaults T
	current  atomic.Pointer[T]
}

// NewConfig returns a Config that holds defaults.
func NewConfig[T any](defaults T) *Config[T] {
	c := &Config[T]{defaults: defaults}
	d := defaults
	c.current.Store(&d)
	return c
}

// Get returns the config in effect. The caller must not change it.
func (c *Config[T]) Get() *T { return c.current.Load() }

// Configure is a Plugin.Configure: it decodes the JSON into a copy of the
// defaults with DecodeConfig, validates it when T or *T is a
// ConfigValidator, and puts it in effect only when nothing is wrong, so
// that a refused config leaves the previous one in effect.
func (c *Config[T]) Configure(_ context.Context, raw json.RawMessage) []FieldError {
	next := c.defaults
	errs := FieldErrors(DecodeConfig(raw, &next))
	if v, ok := any(&next).(ConfigValidator); ok && len(errs) == 0 {
		v.Validate(&errs)
	}
	if len(errs) > 0 {
		return errs
	}
	c.current.Store(&next)
	return nil
}
