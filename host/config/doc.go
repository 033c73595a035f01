// Package config owns the host's own configuration file: the versioned YAML
// document (apiVersion podhost.dev/v1alpha1, kind HostConfig) that names the
// host's directories, its plugins and how they are supervised.
//
// Decoding is strict. [Parse] walks the YAML node tree against the Go types
// and reports every problem it finds, each with its field path and line, in
// one [*ValidationError]: text that is not YAML, unknown or misspelt fields
// (with a did-you-mean), values of the wrong type, bad durations, missing
// required fields, a wrong apiVersion or kind, and rule violations such as
// duplicate plugin names. [Parse] never touches the filesystem;
// [HostConfig.Validate] repeats the rule checks and adds the filesystem checks
// on each plugin binary (it exists, is a regular executable file, and is not
// writable by group or others). [Load] reads a file and does both.
//
// The rules, beyond the shape of the document:
//   - rootDir is required and absolute; pluginDir, manifestDir, api.socket,
//     seccompProfileRoot and pluginRegistrationDir are absolute when set; pluginDir is required when a plugin path is
//     relative.
//   - Plugin names are DNS labels and unique. kind is "runtime" or "volume".
//   - There is exactly one runtime plugin, since no pod can run without one,
//     and it cannot be marked required: false. Volume plugins are optional.
//   - sha256, when set, is 64 hex digits.
//   - Durations are positive; restartBackoff.initial is at most max.
//   - nodeName, when set, is a DNS subdomain (lower case). The kubernetes
//     section, when present, names an absolute kubeconfig file
//     (kubernetes.kubeconfig, required; Load checks that it is a file);
//     kubernetes.nodeIP, when set, is an IP address. Whether the kubeconfig
//     turns TLS verification off is checked where it is read (cmd/host),
//     against kubernetes.allowInsecureSkipTLSVerify.
//   - logFormat is "text" or "json". containerLogMaxSize is a positive
//     quantity ("10Mi"); containerLogMaxFiles is an integer of at least 2.
//   - evictionHard names signals of [EvictionSignals], each a quantity of
//     0 or more or a percentage from 0% to 100%;
//     evictionPressureTransitionPeriod is 0s or more.
//
// The `config` of a plugin entry is free-form YAML, handed to the plugin as
// JSON ([Plugin.Config]).
//
// Only cmd/host imports this package; the supervisor (host/supervisor) does
// not: cmd/host maps [HostConfig.PluginSpecs] onto the supervisor's own
// types. This package imports nothing of the host, only pluginapi (for the
// plugin kinds).
package config
