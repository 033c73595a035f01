// Command volume-scratch is an example volume plugin on sdk.Volumes: a volume
// is a directory under the configured root, bind-mounted on the staging path
// and from there on target paths, deleted by Unstage. Its state is the mount
// table, never a record of its own. It needs root; sdk/volumetest checks it.
package main

import "github.com/podhost/podhost/sdk"

var version = "dev" // set with -ldflags "-X main.version=..."

func main() { sdk.Serve(newPlugin(version)) }

func newPlugin(version string) sdk.Plugin {
	s := &scratch{config: sdk.NewConfig(config{Root: "/var/lib/volume-scratch"})}
	return sdk.Plugin{Name: "volume-scratch", Version: version, Kind: sdk.KindVolume, Volumes: s, Configure: s.config.Configure}
}
