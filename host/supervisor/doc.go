// Package supervisor owns the plugin supervisor of the podhost node agent: it
// launches every configured runtime and volume plugin over go-plugin gRPC
// (versioned handshake, AutoMTLS, optional sha256 pin, plugin logs forwarded
// under the plugin's name), checks each launch (GetInfo, Configure, Probe),
// detects a plugin's exit, fails calls to a dead plugin with ErrPluginExited,
// restarts it with exponential back-off, probes it periodically and tells
// subscribers what happened so the lifecycle can resync.
//
// Manager is the entry point: NewManager, Start with the PluginSpecs the
// config layer produced, List for `podhost plugins list`, Identity and Runtime
// for typed gRPC clients that always reach the current instance of a plugin
// (Client for any other service), Subscribe for lifecycle events and Stop for
// shutdown.
//
// Only the host imports it: cmd/host, host/node (the running agent),
// host/runtimemanager (which turns a runtime plugin's client into the
// lifecycle's Runtime) and host/volumeplugins (the volume plugins'
// clients); package lifecycle never does. Containers are not
// the supervisor's concern: stopping a plugin never touches the workloads
// it started.
package supervisor
