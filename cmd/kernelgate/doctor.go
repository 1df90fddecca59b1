package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

// doctorReport is what doctor found; --json prints it as is.
type doctorReport struct {
	Python      string         `json:"python"`
	Hello       *harness.Hello `json:"hello,omitempty"`
	ColdStartS  float64        `json:"cold_zygote_start_s"`
	GPUs        gpu.Info       `json:"gpus"`
	Mode        string         `json:"mode"`
	ZygoteError string         `json:"zygote_error,omitempty"`
	ProtocolGo  string         `json:"protocol"`
	SchemaGo    string         `json:"verdict_schema"`
	Memory      *memoryFigures `json:"host_memory,omitempty"`
}

func newDoctorCmd(g *globals) *cobra.Command {
	var asJSON, fix bool
	var dataDir string
	cmd := &cobra.Command{
		Use:   "doctor [--data DIR [--fix]]",
		Short: "Check the Python environment, GPUs and sandbox; start one zygote and time it (--data: check a stopped server's data directory instead)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fix && dataDir == "" {
				return usageError{fmt.Errorf("--fix repairs a data directory: give --data")}
			}
			if dataDir != "" {
				return doctorData(g, cmd.Context(), dataDir, fix, asJSON)
			}
			cfg, err := g.config("")
			if err != nil {
				return err
			}
			rep := doctorReport{ProtocolGo: harness.ProtocolVersion, SchemaGo: eval.SchemaVersion}
			rep.Python, err = harness.ResolvePython(cfg.Python)
			if err != nil {
				return err
			}
			rep.GPUs, _ = gpu.Discover() // never fails: no GPU is a reason, not an error
			rep.GPUs.Close()
			gpus := len(rep.GPUs.Devices)
			if cfg.Device == "cpu" {
				gpus = 0
			} else if cfg.Device != "auto" && cfg.Device != "" {
				gpus = min(gpus, 1)
			}
			rep.Memory = hostMemoryFigures(harness.Slots(cfg.Concurrency, gpus))
			// One zygote is enough to learn the versions and the sandbox.
			if cfg.Device != "cpu" {
				cfg.Device = "cpu"
				if len(rep.GPUs.Devices) > 0 {
					cfg.Device = strconv.Itoa(rep.GPUs.Devices[0].Index)
				}
			}
			t0 := time.Now()
			sup, startErr := g.startSupervisor(cmd.Context(), cfg)
			rep.ColdStartS = time.Since(t0).Seconds()
			if startErr == nil {
				if h, ok := sup.Hello(); ok {
					rep.Hello = &h
				}
				rep.Mode = sup.Mode()
				sup.Close()
			} else {
				rep.ZygoteError = startErr.Error()
			}
			if asJSON {
				if err := writeJSON(g.stdout, rep); err != nil {
					return err
				}
			} else {
				printDoctor(g, rep)
			}
			return startErr
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as JSON")
	cmd.Flags().StringVar(&dataDir, "data", "", "check this data directory (serve's --data, with serve stopped): the queue store's streams and buckets and every Parquet file; only these checks run (no zygote)")
	cmd.Flags().BoolVar(&fix, "fix", false, "with --data: put back the records of damaged queue-store blocks (a copy goes to nats/"+bus.DamagedDir+
		" first) and move corrupt Parquet files aside into parquet/"+export.QuarantineDir+"; without it nothing is changed")
	return cmd
}

// doctorData is `doctor --data`: the data checks alone, exit 1 on a problem.
func doctorData(g *globals, ctx context.Context, dir string, fix, asJSON bool) error {
	log, err := g.logger()
	if err != nil {
		return err
	}
	rep := checkData(ctx, dir, fix, log)
	if asJSON {
		if err := writeJSON(g.stdout, rep); err != nil {
			return err
		}
	} else {
		printData(g.stdout, rep)
	}
	if !rep.ok() {
		return errDataProblems
	}
	return nil
}

func printDoctor(g *globals, rep doctorReport) {
	w := g.stdout
	fmt.Fprintf(w, "python:   %s\n", rep.Python)
	if h := rep.Hello; h != nil {
		fmt.Fprintf(w, "versions: python %s, torch %s, triton %s, harness %s, protocol %s\n",
			h.Python, h.Torch, h.Triton, h.HarnessVersion, h.Protocol)
		fmt.Fprintf(w, "sandbox:  %s (netns %v, landlock %v, rlimits %v) %s\n",
			h.Sandbox.Level, h.Sandbox.Netns, h.Sandbox.Landlock, h.Sandbox.Rlimits, h.Sandbox.Detail)
		fmt.Fprintf(w, "cold zygote start: %.1f s\n", rep.ColdStartS)
	} else {
		fmt.Fprintf(w, "zygote:   FAILED: %s\n", rep.ZygoteError)
	}
	if len(rep.GPUs.Devices) == 0 {
		fmt.Fprintf(w, "gpus:     no NVIDIA driver: CPU mode (Triton interpreter) [%s]\n", rep.GPUs.Reason)
	} else {
		fmt.Fprintf(w, "driver:   %s\n", rep.GPUs.Driver)
		for _, d := range rep.GPUs.Devices {
			fmt.Fprintf(w, "gpu %d:    %s, %s, %.1f GiB\n", d.Index, d.Name, d.UUID, float64(d.MemoryTotal)/(1<<30))
		}
	}
	mode := rep.Mode
	if mode == "" {
		mode = "none (no zygote could start)"
	} else if len(rep.GPUs.Devices) > 0 {
		mode = fmt.Sprintf("%s on %d GPU(s)", mode, len(rep.GPUs.Devices))
	}
	fmt.Fprintf(w, "mode:     %s\n", mode)
	if m := rep.Memory; m != nil {
		fmt.Fprintf(w, "memory:   %s\n", m)
	}
}
