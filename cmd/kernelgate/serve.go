package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/worker"
)

func newServeCmd(g *globals) *cobra.Command {
	var addr, dataDir, device string
	var taskDirs []string
	var episodeIdle time.Duration
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--data DIR] [--tasks DIR,...]",
		Short: "Run the reward gateway: HTTP API, embedded queue, workers and the Parquet log",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.config(device)
			if err != nil {
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
			b, err := bus.Open(ctx, bus.Options{DataDir: dataDir}, log)
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
			sup, err := g.startSupervisor(ctx, cfg)
			if err != nil {
				return err
			}
			defer sup.Close()
			sink, err := export.NewSink(filepath.Join(dataDir, "parquet"), writerID(), log)
			if err != nil {
				return err
			}
			srv := gateway.New(gateway.Config{Addr: addr}, gateway.Deps{
				Bus: b, Ready: func() error { return worker.Ready(sup) }, TimingMode: sup.Mode, Log: log,
				Tasks: reg, Episodes: eps,
			})

			// Workers and the sink outlive the HTTP server's drain (its
			// in-flight requests wait on them); they stop after it returns.
			bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
			defer stopBG()
			eg, gctx := errgroup.WithContext(bg)
			eg.Go(func() error { return worker.Run(gctx, b, sup, log) })
			eg.Go(func() error { return sink.Run(gctx, b) })
			eg.Go(func() error {
				defer stopBG()
				hctx, stop := context.WithCancel(gctx)
				defer stop()
				defer context.AfterFunc(ctx, stop)()
				return srv.Run(hctx)
			})
			fmt.Fprintf(g.stderr, "kernelgate: serving on http://%s (data %s, %s)\n", addr, dataDir, sup.Mode())
			return eg.Wait()
		},
	}
	cmd.Flags().StringVar(&addr, "addr", gateway.DefaultAddr, "HTTP listen address")
	cmd.Flags().StringVar(&dataDir, "data", "./data", "data directory (queue store, Parquet log)")
	cmd.Flags().StringVar(&device, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $KERNELGATE_DEVICE)")
	cmd.Flags().StringSliceVar(&taskDirs, "tasks", nil, "task suite directories, repeatable or comma-separated; ids are DIRNAME/STEM (default: the suites under datasets/ next to the working dir or the binary)")
	cmd.Flags().DurationVar(&episodeIdle, "episode-idle", episode.DefaultIdle, "an episode without a step for this long expires")
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
