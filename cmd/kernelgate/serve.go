package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/stack"
)

func newServeCmd(g *globals) *cobra.Command {
	var addr, dataDir, device string
	var maxQueued int64
	var taskDirs []string
	var episodeIdle, compactEvery time.Duration
	var gcfg gateway.Config
	var lf llmFlags
	var nf natsFlags
	var rf retentionFlags
	var workers int
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--data DIR] [--tasks DIR,...] [--nats URL | --nats-listen HOST:PORT] [--workers 0]",
		Short: "Run the reward gateway: HTTP API, embedded queue, workers and the Parquet log",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := gcfg.Validate(); err != nil {
				return usageError{err}
			}
			if maxQueued < 1 {
				return usageError{fmt.Errorf("--max-queued must be at least 1, got %d", maxQueued)}
			}
			if workers != -1 && workers != 0 {
				return usageError{fmt.Errorf("--workers takes 0 (no local evaluation: workers on other hosts join over NATS); leave it out for a worker on every local GPU, got %d", workers)}
			}
			bopts, err := nf.options(bus.Options{DataDir: dataDir, MaxQueuedJobs: maxQueued})
			if err != nil {
				return err
			}
			if err := rf.apply(&bopts); err != nil { // serve_retention.go
				return err
			}
			keys := apikey.NewKeyring(apikey.NewFile(dataDir))
			if err := checkDoors(addr, dataDir, gcfg, keys, g.stderr); err != nil { // serve_doors.go
				return err
			}
			if err := gateway.CheckKeys(addr, keys); errors.Is(err, gateway.ErrNoKeys) {
				return usageError{err}
			} else if err != nil {
				return err
			}
			if episodeIdle <= 0 {
				return usageError{fmt.Errorf("--episode-idle must be positive, got %s", episodeIdle)}
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			cfg := stack.ServeConfig{
				DataDir: dataDir, Bus: bopts, Gateway: gcfg, Keys: keys, TaskDirs: taskDirs,
				Episodes: episode.Config{Idle: episodeIdle}, CompactEvery: compactEvery,
				HostMemoryMB: hostMemoryMB, Version: version, WriterID: writerID(), Log: log,
				Serving: func(a net.Addr, where string) {
					fmt.Fprintf(g.stderr, "kernelgate: serving on http://%s (data %s, %s); the dashboard: http://%s/ui/\n", a, dataDir, where, a)
				},
			}
			cfg.Gateway.Addr = addr
			if workers != 0 {
				hcfg, err := g.config(device)
				if err != nil {
					return err
				}
				cfg.Supervisor = func(ctx context.Context) (*harness.Supervisor, error) { return g.startSupervisor(ctx, hcfg) }
			}
			if lf.url != "" {
				lc, err := lf.config()
				if err != nil {
					return err
				}
				cfg.LLM = &lc
			}
			return configError(stack.Serve(cmd.Context(), cfg))
		},
	}
	cmd.Flags().StringVar(&addr, "addr", gateway.DefaultAddr, "HTTP listen address")
	cmd.Flags().StringVar(&dataDir, "data", "./data", "data directory (queue store, Parquet log)")
	cmd.Flags().Int64Var(&maxQueued, "max-queued", bus.DefaultMaxQueuedJobs, "evaluations queued or running at once; past it requests get 429 queue_full")
	cmd.Flags().StringVar(&device, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $KERNELGATE_DEVICE)")
	cmd.Flags().StringSliceVar(&taskDirs, "tasks", nil, "task suite directories, repeatable or comma-separated; ids are DIRNAME/STEM (default: the suites under datasets/ next to the working dir or the binary)")
	cmd.Flags().DurationVar(&episodeIdle, "episode-idle", episode.DefaultIdle, "an episode without a step for this long expires")
	cmd.Flags().DurationVar(&compactEvery, "compact-every", stack.DefaultCompactEvery, "how often the Parquet log's days before today are compacted into one file each (0: never; `kernelgate compact` does it by hand)")
	rf.register(cmd) // serve_retention.go
	cmd.Flags().Float64Var(&gcfg.RateLimit, "rate-limit", gateway.DefaultRateLimit, "requests/s per API key (0: no limit)")
	cmd.Flags().IntVar(&gcfg.RateBurst, "rate-burst", gateway.DefaultRateBurst, "requests a key may send at once before --rate-limit applies")
	cmd.Flags().DurationVar(&gcfg.DrainDelay, "drain-delay", 0, "on SIGTERM, how long /readyz answers 503 before the listener closes (e.g. 5s behind a load balancer)")
	cmd.Flags().DurationVar(&gcfg.ShutdownTimeout, "shutdown-timeout", gateway.DefaultShutdownTimeout, "on SIGTERM, how long requests in flight get to finish")
	cmd.Flags().IntVar(&gcfg.MaxTimeoutS, "max-timeout-s", gateway.DefaultMaxTimeoutS, "largest timeout_s a request may ask for (1..3600); above it 400 option_above_cap")
	cmd.Flags().IntVar(&gcfg.MaxMemoryMB, "max-memory-mb", 0, fmt.Sprintf("largest memory_limit_mb a request may ask for; a request that gives none gets min(%d, this) (default: 75%% of the host's memory, or of its cgroup's limit, over the evaluation slots, at least %d)",
		eval.DefaultMemoryLimitMB, eval.MinHostMemoryMB))
	registerDoorFlags(cmd, &gcfg) // serve_doors.go
	lf.register(cmd, "optional: without it /v1/searches and /v1/skills answer 503")
	nf.register(cmd, true)
	cmd.Flags().IntVar(&workers, "workers", -1, "0: evaluate nothing here, only on `kernelgate worker` processes joined over NATS (default: a worker on every local GPU, else the CPU)")
	return cmd
}

var notWriterChar = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// writerID names this process in Parquet file names: the host name.
func writerID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "kernelgate"
	}
	h = notWriterChar.ReplaceAllString(h, "_")
	if h[0] == '.' || h[0] == '-' {
		h = "_" + h
	}
	return h[:min(len(h), 64)]
}
