package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds asking the host while the shell waits.
const completionTimeout = 3 * time.Second

// completePods completes a NAMESPACE/NAME argument, or with flag that
// flag's value, from the pods of the host the connection flags name. A
// host that does not answer completes nothing.
func completePods(cmd *cobra.Command, api *apiFlags, flag string) {
	fn := func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if flag == "" && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := api.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		pods, err := c.Pods(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, p := range pods {
			if name := p.Namespace + "/" + p.Name; strings.HasPrefix(name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(name, p.Phase))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	if flag == "" {
		cmd.ValidArgsFunction = fn
		return
	}
	_ = cmd.RegisterFlagCompletionFunc(flag, fn)
}
