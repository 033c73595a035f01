package main

import (
	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

// apiFlags are how a CLI command finds the running host: its unix socket
// (--socket, or the one in --config), or a TCP address with a token.
type apiFlags struct {
	socket, config, server, tokenFile string
}

func (f *apiFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "the host's API socket (default: api.socket of --config)")
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
	sock, err := apiSocket(f.socket, f.config)
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(sock), nil
}
