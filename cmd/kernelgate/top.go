package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/gateway/ui/overview"
)

// topFlags are kernelgate top's flags.
type topFlags struct {
	url      string
	keyEnv   string
	interval time.Duration
	once     bool
}

// newTopCmd is `kernelgate top`: the dashboard's overview in a terminal,
// for SSH sessions. It reads /metrics and /v1/gpus, so its key needs admin.
func newTopCmd(g *globals) *cobra.Command {
	f := &topFlags{}
	cmd := &cobra.Command{
		Use:   "top [--url URL] [--once]",
		Short: "A terminal view of a running gateway: queue, verdicts, latency, workers, GPUs",
		Long: "top reads a running gateway's /metrics and /v1/gpus (scope admin: the key comes from the environment " +
			"variable --key-env names) and redraws every --interval until Ctrl-C; --once prints one frame and exits " +
			"(1 when the gateway cannot be read).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.interval < 200*time.Millisecond {
				return usageError{fmt.Errorf("--interval must be at least 200ms, got %s", f.interval)}
			}
			return runTop(cmd.Context(), g, f)
		},
	}
	cmd.Flags().StringVar(&f.url, "url", "http://127.0.0.1:8080", "the gateway's base URL")
	cmd.Flags().StringVar(&f.keyEnv, "key-env", "KERNELGATE_API_KEY", "environment variable holding an API key with scope admin (unset: no key, for an --open gateway)")
	cmd.Flags().DurationVar(&f.interval, "interval", 2*time.Second, "time between frames")
	cmd.Flags().BoolVar(&f.once, "once", false, "print one frame and exit")
	return cmd
}

func runTop(ctx context.Context, g *globals, f *topFlags) error {
	client := &http.Client{Timeout: 10 * time.Second}
	key := os.Getenv(f.keyEnv)
	if f.once {
		s, err := overview.Fetch(ctx, client, f.url, key)
		if err != nil {
			return topError(err, f.keyEnv, key)
		}
		return overview.WriteText(g.stdout, s, overview.Snapshot{}, f.url)
	}
	var prev overview.Snapshot
	tick := time.NewTicker(f.interval)
	defer tick.Stop()
	for {
		var frame bytes.Buffer
		frame.WriteString("\x1b[H\x1b[2J") // home and clear: each frame replaces the last
		s, err := overview.Fetch(ctx, client, f.url, key)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(&frame, "kernelgate top: %v (retrying every %s; Ctrl-C quits)\n", topError(err, f.keyEnv, key), f.interval)
		} else if err == nil {
			overview.WriteText(&frame, s, prev, f.url)
			prev = s
		}
		g.stdout.Write(frame.Bytes())
		select {
		case <-ctx.Done():
			return nil // Ctrl-C is how top ends
		case <-tick.C:
		}
	}
}

// topError adds the fix to a refusal: which variable the key came from.
func topError(err error, keyEnv, key string) error {
	var he *overview.HTTPError
	if !errors.As(err, &he) {
		return err
	}
	switch {
	case he.Status == http.StatusUnauthorized && key == "":
		return fmt.Errorf("%w (no key: $%s is empty; set it to a key with scope admin)", err, keyEnv)
	case he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden:
		return fmt.Errorf("%w (the key in $%s; top needs scope admin)", err, keyEnv)
	}
	return err
}
