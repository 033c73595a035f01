// Package midway carries the conformance kit's interrupt hook in a call's
// context: sdk.Midway calls the hook a context carries, and sdk/volumetest
// puts one there for each Stage and Publish it serves. It exists for those
// two; nothing else imports it.
package midway

import "context"

type key struct{}

// With returns ctx carrying hook.
func With(ctx context.Context, hook func(context.Context)) context.Context {
	return context.WithValue(ctx, key{}, hook)
}

// Call calls the hook ctx carries, if any, with ctx.
func Call(ctx context.Context) {
	if hook, ok := ctx.Value(key{}).(func(context.Context)); ok && hook != nil {
		hook(ctx)
	}
}
