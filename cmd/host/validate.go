package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/config"
)

func newValidateCommand() *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "validate --config FILE",
		Short: "Check a host config and its plugin binaries; print every problem with its field path",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := loadConfig(path); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return exitError{code: 1}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: valid\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "host config file (YAML)")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// loadConfig loads and fully validates the config at path, including the
// plugin binaries it names.
func loadConfig(path string) (*config.HostConfig, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(nil); err != nil {
		return nil, err
	}
	return cfg, nil
}
