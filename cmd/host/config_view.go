package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/config"
)

func newConfigCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect the host config"}
	cmd.AddCommand(newConfigViewCommand())
	return cmd
}

func newConfigViewCommand() *cobra.Command {
	var path string
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "view [--config FILE]",
		Short: "Print the effective host config: defaults filled in, plugin paths resolved",
		Long: "Print the host config as the host runs it: every default filled in and each\n" +
			"plugin's path made absolute against pluginDir. The document is checked as\n" +
			"`podhost validate` checks it, except for the plugin binaries themselves.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("reading host config: %w", err)
			}
			cfg, err := config.Parse(data, path)
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return exitError{code: 1}
			}
			for i, spec := range cfg.PluginSpecs() {
				cfg.Plugins[i].Path = spec.Path
			}
			return out.printer(cmd.OutOrStdout()).print(configValue(reflect.ValueOf(*cfg)), table{})
		},
	}
	cmd.Flags().StringVar(&path, "config", defaultConfigPath, "host config file (YAML)")
	out.register(cmd, "yaml", "yaml", "json")
	return cmd
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	rawType      = reflect.TypeFor[json.RawMessage]()
)

// configValue renders a config value under its YAML field names, with
// durations as "10s" and free-form plugin config as its JSON value.
func configValue(v reflect.Value) any {
	switch {
	case v.Type() == durationType:
		return time.Duration(v.Int()).String()
	case v.Type() == rawType:
		var x any
		if v.Len() == 0 || json.Unmarshal(v.Bytes(), &x) != nil {
			return nil
		}
		return x
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return configValue(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if f.IsExported() && name != "" && name != "-" {
				m[name] = configValue(v.Field(i))
			}
		}
		return m
	case reflect.Slice:
		s := make([]any, v.Len())
		for i := range s {
			s[i] = configValue(v.Index(i))
		}
		return s
	}
	return v.Interface()
}
