package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/rollout/skills"
	"github.com/kernelgate/kernelgate/stack"
)

// llmFlags select the endpoint of `search` and `adapt`.
type llmFlags struct {
	url, model, keyEnv string
	temperature        float64
	maxTokens, retries int
}

func (f *llmFlags) register(cmd *cobra.Command, need string) {
	fs := cmd.Flags()
	fs.StringVar(&f.url, "llm-url", "", "OpenAI-compatible endpoint, ending in /v1 ("+need+")")
	fs.StringVar(&f.model, "model", "", "model name (required with --llm-url)")
	fs.StringVar(&f.keyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the API key (unset: no key, for local servers)")
	fs.Float64Var(&f.temperature, "temperature", llm.DefaultTemperature, "sampling temperature (0..2)")
	fs.IntVar(&f.maxTokens, "max-tokens", llm.DefaultMaxTokens, "completion token limit per call")
	fs.IntVar(&f.retries, "llm-retries", llm.DefaultRetries, "retries of a failed LLM call (429, 5xx, network), with backoff")
}

// config is the LLM client's config; what is missing or out of range is a
// usage error. The key is read from the environment, never from a flag
// (flags show up in ps and shell history).
func (f *llmFlags) config() (llm.Config, error) {
	t := f.temperature
	c := llm.Config{BaseURL: f.url, Model: f.model, APIKey: os.Getenv(f.keyEnv), Temperature: &t, MaxTokens: f.maxTokens,
		Retries: f.retries}
	switch {
	case f.url == "" || f.model == "":
		return c, usageError{errors.New("--llm-url and --model are required")}
	case f.retries < 0:
		return c, usageError{fmt.Errorf("--llm-retries must be >= 0, got %d", f.retries)}
	case f.retries == 0:
		c.Retries = -1 // llm.Config: 0 is the default, negative is none
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c, nil
}

// searchStack is what `search` and `adapt` run on, wired as serve wires
// it (stack): the embedded bus and Parquet sink in --data, a Supervisor,
// the skill memory (--data/skills.json) and the runner.
type searchStack struct {
	b       *bus.Bus
	sup     *harness.Supervisor
	mem     *skills.Memory
	mgr     *runner.Manager
	log     *slog.Logger
	running *stack.Running
}

func (g *globals) openSearchStack(ctx context.Context, dataDir, device string, lc llm.Config, reg runner.Tasks) (*searchStack, error) {
	cfg, err := g.config(device)
	if err != nil {
		return nil, err
	}
	log, err := g.logger()
	if err != nil {
		return nil, err
	}
	s := &searchStack{log: log}
	s.running, err = stack.Start(ctx, log,
		stack.Component{Name: "the bus", Start: func(ctx context.Context) (err error) {
			s.b, err = bus.Open(ctx, bus.Options{DataDir: dataDir}, log)
			return err
		}, Stop: func(context.Context) error { s.b.Close(); return nil }},
		stack.Sink(filepath.Join(dataDir, "parquet"), writerID(), func() *bus.Bus { return s.b }, log),
		stack.Component{Name: "the harness", Start: func(ctx context.Context) (err error) {
			s.sup, err = g.startSupervisor(ctx, cfg)
			return err
		}, Stop: func(context.Context) error { s.sup.Close(); return nil }},
		stack.Component{Name: "the search runner", Start: func(ctx context.Context) (err error) {
			// Through the result cache in --data: a kernel judged before
			// there is not run again.
			ev := &dispatch.Local{Bus: s.b, Harness: s.sup, Log: log}
			s.mgr, s.mem, err = stack.NewRunner(ctx, lc, dataDir, s.b, ev, stack.GPUName(s.sup), reg, log)
			return configError(err)
		}, Stop: func(context.Context) error { s.mgr.Close(); return nil }},
	)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// close stops the runner (a search still running stays resumable), the
// workers, then lets the sink write everything logged before it stops.
func (s *searchStack) close() {
	if err := s.running.Stop(); err != nil {
		s.log.Warn("stopping the search stack", "err", err)
	}
}

// follow shows the search's progress until it ends; Ctrl-C cancels it.
func (s *searchStack) follow(ctx context.Context, st runner.Status, progress bool, w io.Writer) (runner.Status, error) {
	var bar *progressbar.ProgressBar
	if progress {
		bar = progressbar.NewOptions(st.StepsBudget, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish(),
			progressbar.OptionSetDescription("searching"))
	}
	var p progressState
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		ch, err := s.mgr.Subscribe(sctx, st.SearchID, p.last)
		if err != nil {
			return st, err
		}
		for open := true; open; {
			select {
			case ev, ok := <-ch:
				if open = ok; ok && p.add(ev) && bar != nil {
					bar.Describe(p.String())
					_ = bar.Add(1)
				}
			case <-ctx.Done():
				return interrupted(ctx, s, st.SearchID)
			}
		}
		// The stream closed: the search ended, or this reader fell behind.
		if st, err = s.mgr.Get(sctx, st.SearchID); err != nil || st.State != runner.StateRunning {
			if bar != nil {
				_ = bar.Finish()
			}
			return st, err
		}
	}
}

// progressState is the progress bar's text: the best kernel, pass rate,
// tokens. The best is its speedup where timings compare (a GPU), else its
// status: the CPU interpreter times nothing.
type progressState struct {
	last, nodes, correct, tokens int
	best                         *float64
	bestStatus                   string // the best node's verdict status, with why it has no speedup
}

// add counts ev; false for a step that did not use up a step (skipped tune).
func (p *progressState) add(ev runner.Event) bool {
	p.last = ev.Seq
	p.tokens += ev.TokensIn + ev.TokensOut
	if ev.BestSpeedup != nil {
		p.best = ev.BestSpeedup
	}
	if v := ev.Verdict; v != nil {
		p.nodes++
		if v.Correct {
			p.correct++
		}
		if ev.Node > 0 && ev.Node == ev.BestNode {
			p.bestStatus = string(v.Status)
			if v.Correct && v.TimingMode == eval.TimingCPUInterpreter {
				p.bestStatus += " (no timing on CPU)"
			}
		}
	}
	return !runner.SkippedTune(ev.Step)
}

func (p *progressState) String() string {
	best := "-"
	switch {
	case p.best != nil:
		best = fmt.Sprintf("%.2fx", *p.best)
	case p.bestStatus != "":
		best = p.bestStatus
	}
	return fmt.Sprintf("best %s, pass %d/%d, %d tokens", best, p.correct, p.nodes, p.tokens)
}
