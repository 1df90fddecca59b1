package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/stack"
)

func newWorkerCmd(g *globals) *cobra.Command {
	var nf natsFlags
	var device string
	var ackWait time.Duration
	cmd := &cobra.Command{
		Use:   "worker --nats URL[,URL...] [--device N|cpu]",
		Short: "Evaluate jobs from a gateway's NATS queue on this host's GPUs (or its CPU)",
		Long: "Runs a zygote per local GPU (or one on the CPU) and pulls jobs from the NATS server of a\n" +
			"`kernelgate serve` (its --nats-listen address) or an external cluster. Verdicts, results and\n" +
			"log events go back through NATS; nothing is written here. On SIGTERM a job in flight goes\n" +
			"back to the queue for another worker.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if nf.url == "" {
				return usageError{fmt.Errorf("--nats is required: the gateway's NATS address, e.g. nats://gateway-host:4222")}
			}
			if ackWait < time.Second {
				return usageError{fmt.Errorf("--job-ack-wait must be at least 1s, got %s", ackWait)}
			}
			// Join: the gateway's limits (--max-queued, retention) stay as it set them.
			bopts, err := nf.options(bus.Options{JobAckWait: ackWait, Join: true})
			if err != nil {
				return err
			}
			cfg, err := g.config(device)
			if err != nil {
				return err
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			host, _ := os.Hostname()
			id := fmt.Sprintf("%s-%d", writerID(), os.Getpid())
			return stack.Worker(cmd.Context(), stack.WorkerConfig{
				Bus:        bopts,
				Supervisor: func(ctx context.Context) (*harness.Supervisor, error) { return g.startSupervisor(ctx, cfg) },
				ID:         id, Host: host, Log: log,
				Started: func(mode string, slots int) {
					fmt.Fprintf(g.stderr, "kernelgate: worker %s pulling jobs from %s (%s, %d slots)\n", id, nf.url, mode, slots)
				},
			})
		},
	}
	nf.register(cmd, false)
	cmd.Flags().DurationVar(&ackWait, "job-ack-wait", bus.DefaultJobAckWait, "how soon a job whose worker died (kill -9, a lost host) runs again elsewhere; every worker of a queue should use one value")
	cmd.Flags().StringVar(&device, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $KERNELGATE_DEVICE)")
	return cmd
}
