package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/config"
	"github.com/podhost/podhost/host/localapi"
)

// defaultConfigPath is the host config the CLI reads to find the API
// socket when nothing else names it.
const defaultConfigPath = "/etc/podhost/host.yaml"

// socketEnv names the API socket when no connection flag is given.
const socketEnv = "PODHOST_SOCKET"

// apiFlags are how every command that talks to the host finds it: its unix
// socket (--socket, the api.socket of --config, $PODHOST_SOCKET, or that of
// the default config, in this order), or a TCP address with a token.
type apiFlags struct {
	socket, config, server, tokenFile string
}

func (f *apiFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "the host's API socket (default: $"+socketEnv+", else api.socket of --config)")
	fl.StringVar(&f.config, "config", "", "host config, to find the API socket (default "+defaultConfigPath+")")
	fl.StringVar(&f.server, "server", "", "the host's TCP API address, http://HOST:PORT (needs --token-file)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token for --server (mode 0600)")
	cmd.MarkFlagsMutuallyExclusive("socket", "server")
	cmd.MarkFlagsMutuallyExclusive("config", "server")
	cmd.MarkFlagsRequiredTogether("server", "token-file")
}

// client returns the API client the flags ask for.
func (f *apiFlags) client() (*localapi.Client, error) {
	if f.server != "" {
		token, err := localapi.ReadTokenFile(f.tokenFile)
		if err != nil {
			return nil, err
		}
		return localapi.NewTCPClient(f.server, token)
	}
	sock, err := f.apiSocket()
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(sock), nil
}

// clientFor is the prelude of the commands that name one object: it
// splits arg, NAMESPACE/NAME (splitPodName), then opens the client.
func (f *apiFlags) clientFor(arg string) (c *localapi.Client, ns, name string, err error) {
	if ns, name, err = splitPodName(arg); err != nil {
		return nil, "", "", err
	}
	c, err = f.client()
	return c, ns, name, err
}

// clientWithManifest is the prelude of the apply commands: it reads the
// manifest file (readManifest), then opens the client.
func (f *apiFlags) clientWithManifest(cmd *cobra.Command, file string) (*localapi.Client, []byte, error) {
	body, err := readManifest(cmd, file)
	if err != nil {
		return nil, nil, err
	}
	c, err := f.client()
	return c, body, err
}

// apiSocket finds the local API socket.
func (f *apiFlags) apiSocket() (string, error) {
	if f.socket != "" {
		return f.socket, nil
	}
	if env := os.Getenv(socketEnv); env != "" && f.config == "" {
		return env, nil
	}
	path := f.config
	if path == "" {
		path = defaultConfigPath
	}
	cfg, err := config.Load(path)
	if err != nil {
		return "", fmt.Errorf("finding the API socket (give --socket, --config or $%s): %w", socketEnv, err)
	}
	return filepath.Clean(cfg.API.Socket), nil
}
