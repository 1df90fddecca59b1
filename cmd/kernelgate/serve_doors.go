package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/gateway/apikey"
)

// registerDoorFlags adds serve's flags for who may come in (gateway/doors.go)
// and the export quota.
func registerDoorFlags(cmd *cobra.Command, cfg *gateway.Config) {
	f := cmd.Flags()
	f.BoolVar(&cfg.Doors.Open, "open", false, "let callers on this machine in without a key while DATA/keys.json does not exist "+
		"(loopback --addr only); without it and without keys every request but health answers 401")
	f.StringSliceVar(&cfg.Doors.AllowedHosts, "allowed-hosts", gateway.DefaultAllowedHosts,
		"on loopback, the names a request's Host and Origin may carry (any port; \"*\": any name); others get 403")
	f.IntVar(&cfg.Doors.AuthFailLimit, "auth-fail-limit", gateway.DefaultAuthFailLimit,
		"failed authentications per key prefix, and per source address, within --auth-fail-window; past it failures get 429 "+
			"instead of 401, a valid key never (-1: no limit)")
	f.DurationVar(&cfg.Doors.AuthFailWindow, "auth-fail-window", gateway.DefaultAuthFailWindow,
		"the sliding window of --auth-fail-limit")
	f.IntVar(&cfg.ExportsPerHour, "exports-per-hour", gateway.DefaultExportsPerHour,
		"POST /v1/exports each API key may make per hour, refilled evenly; past it 429 quota_exceeded (-1: no quota)")
}

// checkDoors refuses --open beyond loopback and says when it does nothing.
func checkDoors(addr, dataDir string, cfg gateway.Config, keys *apikey.Keyring, stderr io.Writer) error {
	switch {
	case cfg.ExportsPerHour == 0:
		return usageError{fmt.Errorf("--exports-per-hour 0 would refuse every export; give a positive number, or -1 for no quota")}
	case cfg.Doors.AuthFailLimit == 0:
		return usageError{fmt.Errorf("--auth-fail-limit 0 would answer every failed authentication 429, never 401; give a positive number, or -1 for no limit")}
	}
	if err := gateway.CheckOpen(addr, cfg.Doors); err != nil {
		return usageError{err}
	}
	if !cfg.Doors.Open {
		return nil
	}
	if _, exists, err := keys.Count(); err == nil && exists {
		fmt.Fprintf(stderr, "kernelgate: --open has no effect: %s exists, so every request needs a key from it\n",
			filepath.Join(dataDir, apikey.FileName))
	}
	return nil
}
