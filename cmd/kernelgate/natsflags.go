package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/bus"
)

// natsFlags are how serve and worker reach NATS: an external server or
// cluster (--nats), or for serve the embedded server, optionally listening
// (--nats-listen) so that workers on other hosts can join.
type natsFlags struct {
	url, listen, tokenFile, creds, ca string
}

// TokenEnv holds the NATS token when --nats-token-file is not given.
const TokenEnv = "KERNELGATE_NATS_TOKEN"

func (f *natsFlags) register(cmd *cobra.Command, listen bool) {
	cmd.Flags().StringVar(&f.url, "nats", "", "NATS server or cluster to use, nats://HOST:PORT[,nats://...] (tls:// for TLS)")
	if listen {
		cmd.Flags().StringVar(&f.listen, "nats-listen", "", "let workers on other hosts join the embedded NATS server at HOST:PORT (beyond loopback it needs a token)")
	}
	cmd.Flags().StringVar(&f.tokenFile, "nats-token-file", "", "file holding the NATS token (default: $"+TokenEnv+"); the embedded server requires it of every client")
	cmd.Flags().StringVar(&f.creds, "nats-creds", "", "NATS credentials file (user JWT and nkey) for --nats")
	cmd.Flags().StringVar(&f.ca, "nats-ca", "", "PEM root certificates to verify --nats's TLS with")
}

// options fills the bus options these flags decide.
func (f *natsFlags) options(o bus.Options) (bus.Options, error) {
	o.URL, o.Listen, o.CredsFile, o.CAFile = f.url, f.listen, f.creds, f.ca
	o.Token = os.Getenv(TokenEnv)
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return o, usageError{fmt.Errorf("--nats-token-file: %w", err)}
		}
		o.Token = strings.TrimSpace(string(b))
		if o.Token == "" {
			return o, usageError{fmt.Errorf("--nats-token-file %s is empty", f.tokenFile)}
		}
	}
	if f.listen != "" && f.url != "" {
		return o, usageError{fmt.Errorf("--nats-listen exposes the embedded server; with --nats the cluster is external: give one of them")}
	}
	if (f.creds != "" || f.ca != "") && f.url == "" {
		return o, usageError{fmt.Errorf("--nats-creds and --nats-ca are for an external --nats server")}
	}
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}
