package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/worker"
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
			local := workers != 0
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
			ctx := cmd.Context()
			b, err := bus.Open(ctx, bopts, log)
			if err != nil {
				return err
			}
			defer b.Close()
			reg, err := openTasks(ctx, b, taskDirs, log)
			if err != nil {
				return err
			}
			eps, err := episode.Open(ctx, b, episode.Config{Idle: episodeIdle})
			if err != nil {
				return err
			}
			var sup *harness.Supervisor
			if local {
				cfg, err := g.config(device)
				if err != nil {
					return err
				}
				if sup, err = g.startSupervisor(ctx, cfg); err != nil {
					return err
				}
				defer sup.Close()
			}
			sink, err := export.NewSink(filepath.Join(dataDir, "parquet"), writerID(), log)
			if err != nil {
				return err
			}
			gcfg.Addr = addr
			if gcfg.MaxMemoryMB == 0 && local {
				slots := evalSlots(sup)
				mb, m, err := hostMemoryMB(slots)
				if err != nil {
					log.Warn("host memory unknown: --max-memory-mb is the harness default", "max_memory_mb", mb, "err", err)
				} else {
					log.Info("--max-memory-mb from the host", "max_memory_mb", mb, "host", m.String(), "slots", slots)
				}
				gcfg.MaxMemoryMB = mb
			}
			deps := gateway.Deps{
				Bus: b, Tasks: reg, Episodes: eps, Keys: keys, Log: log,
				Exports: gateway.Exports{DataDir: dataDir, Version: version},
			}
			if local {
				deps.Ready, deps.TimingMode, deps.GPUs = func() error { return worker.Ready(sup) }, sup.Mode, sup
				deps.Envs = func() []dispatch.Env { return dispatch.PoolEnvs(sup) }
			} else {
				// Workers on other hosts: ready while one is announced, and the
				// cache answers with verdicts made in their environments.
				roster := worker.NewRoster(b, 2*time.Second)
				deps.Ready, deps.TimingMode, deps.Envs, deps.GPUs = roster.Ready, roster.Mode, roster.Envs, roster
			}
			// One evaluation service for reward batches, task checks, episodes
			// and searches.
			deps.Evals = &dispatch.Service{Bus: b, Mode: deps.TimingMode, Envs: deps.Envs, Poll: gcfg.ResultPoll, Log: log}
			mgr, err := openSearches(ctx, &lf, dataDir, b, sup, reg, &deps, log)
			if err != nil {
				return err
			}
			srv := gateway.New(gcfg, deps)
			// Listen before saying "serving": a busy port is the one error, not
			// a line after a false start.
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("cannot listen on %s: %w", addr, err)
			}

			// Shutdown order: the HTTP server drains first (its in-flight
			// requests wait on the workers); then the workers stop (a job
			// cut short goes back to the queue); then the sink writes what
			// they logged (bounded) and stops.
			bg := context.WithoutCancel(ctx)
			wctx, stopWorkers := context.WithCancel(bg)
			defer stopWorkers()
			sctx, stopSink := context.WithCancel(bg)
			defer stopSink()
			eg, gctx := errgroup.WithContext(bg)
			workersDone := make(chan struct{})
			eg.Go(func() error {
				defer close(workersDone)
				if !local {
					return nil
				}
				return worker.Run(wctx, b, sup, log)
			})
			eg.Go(func() error { return sink.Run(sctx, b) })
			go compactLoop(sctx, filepath.Join(dataDir, "parquet"), compactEvery, log)
			eg.Go(func() error {
				hctx, stop := context.WithCancel(gctx) // a failed worker or sink stops the server too
				defer stop()
				defer context.AfterFunc(ctx, stop)()
				err := srv.Serve(hctx, ln)
				if mgr != nil {
					mgr.Close() // running searches stay resumable at the next start
				}
				stopWorkers()
				<-workersDone
				flushSink(sink, b, log, sinkFlushTimeout)
				stopSink()
				return err
			})
			where := "no local workers"
			if local {
				where = sup.Mode()
			}
			if a := b.ListenAddr(); a != "" {
				where += ", NATS for workers on nats://" + a
			}
			fmt.Fprintf(g.stderr, "kernelgate: serving on http://%s (data %s, %s)\n", ln.Addr(), dataDir, where)
			return eg.Wait()
		},
	}
	cmd.Flags().StringVar(&addr, "addr", gateway.DefaultAddr, "HTTP listen address")
	cmd.Flags().StringVar(&dataDir, "data", "./data", "data directory (queue store, Parquet log)")
	cmd.Flags().Int64Var(&maxQueued, "max-queued", bus.DefaultMaxQueuedJobs, "evaluations queued or running at once; past it requests get 429 queue_full")
	cmd.Flags().StringVar(&device, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $KERNELGATE_DEVICE)")
	cmd.Flags().StringSliceVar(&taskDirs, "tasks", nil, "task suite directories, repeatable or comma-separated; ids are DIRNAME/STEM (default: the suites under datasets/ next to the working dir or the binary)")
	cmd.Flags().DurationVar(&episodeIdle, "episode-idle", episode.DefaultIdle, "an episode without a step for this long expires")
	cmd.Flags().DurationVar(&compactEvery, "compact-every", DefaultCompactEvery, "how often the Parquet log's days before today are compacted into one file each (0: never; `kernelgate compact` does it by hand)")
	rf.register(cmd) // serve_retention.go
	cmd.Flags().Float64Var(&gcfg.RateLimit, "rate-limit", gateway.DefaultRateLimit, "requests/s per API key (0: no limit)")
	cmd.Flags().IntVar(&gcfg.RateBurst, "rate-burst", gateway.DefaultRateBurst, "requests a key may send at once before --rate-limit applies")
	cmd.Flags().DurationVar(&gcfg.DrainDelay, "drain-delay", 0, "on SIGTERM, how long /readyz answers 503 before the listener closes (e.g. 5s behind a load balancer)")
	cmd.Flags().DurationVar(&gcfg.ShutdownTimeout, "shutdown-timeout", gateway.DefaultShutdownTimeout, "on SIGTERM, how long requests in flight get to finish")
	cmd.Flags().IntVar(&gcfg.MaxTimeoutS, "max-timeout-s", gateway.DefaultMaxTimeoutS, "largest timeout_s a request may ask for (1..3600); above it 400 option_above_cap")
	cmd.Flags().IntVar(&gcfg.MaxMemoryMB, "max-memory-mb", 0, fmt.Sprintf("largest memory_limit_mb a request may ask for; a request that gives none gets min(%d, this) (default: the host's memory, or its cgroup's limit, over the evaluation slots, at least %d)",
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
