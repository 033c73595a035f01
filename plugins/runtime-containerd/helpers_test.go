package main

import "github.com/hashicorp/go-hclog"

// testLogger discards the plugin's logs.
func testLogger() hclog.Logger { return hclog.NewNullLogger() }
