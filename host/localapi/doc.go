// Package localapi owns the host's local HTTP API on a unix socket under the
// root directory (mode 0600, so only root and the socket's owner reach it)
// and the client the `host` CLI uses to read it. It serves read-only views
// that the host hands it as functions, so it depends on nothing of the host.
//
// Endpoints:
//
//	GET /v1/plugins   the supervised plugins (JSON array of PluginInfo)
//	GET /healthz      200 while the host process serves
//	GET /readyz       200 when every required plugin is ready, else 503
package localapi
