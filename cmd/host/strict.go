package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// strictCommands makes the tree under root refuse what it does not know,
// as kubectl does: an unknown subcommand (also of a command group, which
// cobra would answer with its help and exit status 0) and an unknown flag
// are errors with a suggestion and a pointer to --help.
func strictCommands(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Args = helpArgs
		}
	}
	walkCommands(root, func(c *cobra.Command) {
		if !c.HasSubCommands() {
			return
		}
		if !c.Runnable() {
			c.Annotations = map[string]string{groupAnnotation: "true"}
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return cmd.Help()
				}
				return unknownCommand(cmd, args[0])
			}
			return
		}
		own := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if own == nil || len(args) == 0 {
				return nil
			}
			if err := own(cmd, args); err != nil {
				return unknownCommand(cmd, args[0])
			}
			return nil
		}
	})
}

// groupAnnotation marks a command that only groups others.
const groupAnnotation = "podhost/group"

// helpArgs refuses `podhost help` of a command that does not exist, which
// cobra answers with the root's help and exit status 0.
func helpArgs(cmd *cobra.Command, args []string) error {
	target, rest, err := cmd.Root().Find(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return unknownCommand(target, rest[0])
	}
	return nil
}

// walkCommands calls fn for c and every command under it.
func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, fn)
	}
}

// suggestionDistance is cobra's default for how far a typo may be from
// what it suggests.
const suggestionDistance = 2

func unknownCommand(cmd *cobra.Command, arg string) error {
	msg := fmt.Sprintf("unknown command %q for %q", arg, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = suggestionDistance
	}
	return usageError(cmd, msg, cmd.SuggestionsFor(arg))
}

// flagError adds the closest flag names to cobra's "unknown flag" errors.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	var typed string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		typed = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: '"):
		typed, _, _ = strings.Cut(strings.TrimPrefix(msg, "unknown shorthand flag: '"), "'")
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	var hints []string
	if typed != "" {
		for _, s := range closest(typed, names) {
			hints = append(hints, "--"+s)
		}
	}
	return usageError(cmd, msg, hints)
}

// closest returns the names that look like typed, by cobra's measure for
// command suggestions.
func closest(typed string, names []string) []string {
	probe := &cobra.Command{SuggestionsMinimumDistance: suggestionDistance}
	for _, n := range names {
		probe.AddCommand(&cobra.Command{Use: n, Run: func(*cobra.Command, []string) {}})
	}
	return probe.SuggestionsFor(typed)
}

// usageError is msg with its suggestions and where to read the usage.
func usageError(cmd *cobra.Command, msg string, suggestions []string) error {
	if len(suggestions) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(suggestions, "\n\t")
	}
	return fmt.Errorf("%s\n\nRun '%s --help' for usage", msg, cmd.CommandPath())
}
