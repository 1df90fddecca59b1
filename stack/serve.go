package stack

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/hostmem"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/worker"
)

// ServeConfig is `kernelgate serve`.
type ServeConfig struct {
	DataDir string
	Bus     bus.Options
	Gateway gateway.Config // its Addr is where the server listens
	Keys    *apikey.Keyring
	// TaskDirs are the suites to serve (none: those next to the working
	// directory or the binary).
	TaskDirs []string
	Episodes episode.Config
	// CompactEvery: how often the Parquet log's past days are compacted (0: never).
	CompactEvery time.Duration
	// Supervisor starts the local harness; nil: no local evaluation
	// (workers on other hosts join over NATS).
	Supervisor func(ctx context.Context) (*harness.Supervisor, error)
	// HostMemoryMB is a slot's share of the host's memory, the default of
	// Gateway.MaxMemoryMB when it is 0 and evaluation is local.
	HostMemoryMB func(slots int) (int, hostmem.Memory, error)
	// LLM configures searches; nil: /v1/searches and /v1/skills answer 503.
	LLM      *llm.Config
	Version  string
	WriterID string // names this process's Parquet files
	Log      *slog.Logger
	// Serving is told, once everything runs, where and how the server serves.
	Serving func(addr net.Addr, where string)
}

// serve is one run of Serve: what its components share.
type serve struct {
	cfg  ServeConfig
	log  *slog.Logger
	b    *bus.Bus
	sup  *harness.Supervisor
	deps gateway.Deps
	mgr  *runner.Manager // nil: no searches
	ln   net.Listener
	srv  *gateway.Server
}

// Serve runs the gateway until ctx ends or a component fails.
func Serve(ctx context.Context, cfg ServeConfig) error {
	s := &serve{cfg: cfg, log: cfg.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	r, err := Start(ctx, s.log,
		Component{Name: "the bus", Start: s.openBus, Stop: func(context.Context) error { s.b.Close(); return nil }},
		Component{Name: "tasks and episodes", Start: s.openStores},
		Component{Name: "the harness", Start: s.startHarness, Stop: s.stopHarness},
		Sink(filepath.Join(cfg.DataDir, "parquet"), cfg.WriterID, func() *bus.Bus { return s.b }, s.log),
		Component{Name: "compaction", Run: func(ctx context.Context) error {
			compactLoop(ctx, filepath.Join(cfg.DataDir, "parquet"), cfg.CompactEvery, s.log)
			<-ctx.Done() // a loop that is off (CompactEvery 0) is no failure
			return nil
		}},
		Component{Name: "the workers", Start: s.wireWorkers, Run: s.runWorkers},
		Component{Name: "searches", Start: s.openSearches, Stop: s.closeSearches},
		Component{Name: "the HTTP server", Start: s.listen, Run: func(ctx context.Context) error { return s.srv.Serve(ctx, s.ln) }},
	)
	if err != nil {
		return err
	}
	if cfg.Serving != nil {
		where := "no local workers"
		if s.sup != nil {
			where = s.sup.Mode()
		}
		if a := s.b.ListenAddr(); a != "" {
			where += ", NATS for workers on nats://" + a
		}
		cfg.Serving(s.ln.Addr(), where)
	}
	return wait(ctx, r)
}

func (s *serve) openBus(ctx context.Context) (err error) {
	s.b, err = bus.Open(ctx, s.cfg.Bus, s.log)
	return err
}

func (s *serve) openStores(ctx context.Context) error {
	reg, err := openTasks(ctx, s.b, s.cfg.TaskDirs, s.log)
	if err != nil {
		return err
	}
	eps, err := episode.Open(ctx, s.b, s.cfg.Episodes)
	if err != nil {
		return err
	}
	s.deps = gateway.Deps{
		Bus: s.b, Tasks: reg, Episodes: eps, Keys: s.cfg.Keys, Log: s.log,
		Exports: gateway.Exports{DataDir: s.cfg.DataDir, Version: s.cfg.Version},
	}
	return nil
}

func (s *serve) startHarness(ctx context.Context) (err error) {
	if s.cfg.Supervisor == nil {
		return nil
	}
	s.sup, err = s.cfg.Supervisor(ctx)
	return err
}

func (s *serve) stopHarness(context.Context) error {
	if s.sup != nil {
		s.sup.Close()
	}
	return nil
}

// wireWorkers says who evaluates: the local harness, or the workers
// announced on the bus (their environments for the cache and routing).
func (s *serve) wireWorkers(context.Context) error {
	d := &s.deps
	if s.sup != nil {
		sup := s.sup
		d.Ready, d.TimingMode, d.GPUs = func() error { return worker.Ready(sup) }, sup.Mode, sup
		d.Envs = func() []dispatch.Env { return dispatch.PoolEnvs(sup) }
		if s.cfg.Gateway.MaxMemoryMB == 0 && s.cfg.HostMemoryMB != nil {
			slots := worker.Slots(sup)
			mb, m, err := s.cfg.HostMemoryMB(slots)
			if err != nil {
				s.log.Warn("host memory unknown: --max-memory-mb is the harness default", "max_memory_mb", mb, "err", err)
			} else {
				s.log.Info("--max-memory-mb from the host", "max_memory_mb", mb, "host", m.String(), "slots", slots)
			}
			s.cfg.Gateway.MaxMemoryMB = mb
		}
	} else {
		roster := worker.NewRoster(s.b, 2*time.Second)
		d.Ready, d.TimingMode, d.Envs, d.GPUs = roster.Ready, roster.Mode, roster.Envs, roster
	}
	// One evaluation service for reward batches, task checks, episodes and searches.
	d.Evals = &dispatch.Service{Bus: s.b, Mode: d.TimingMode, Envs: d.Envs, Poll: s.cfg.Gateway.ResultPoll, Log: s.log}
	return nil
}

func (s *serve) runWorkers(ctx context.Context) error {
	if s.sup == nil {
		<-ctx.Done()
		return nil
	}
	return worker.Run(ctx, s.b, s.sup, s.log)
}

// openSearches wires /v1/searches and /v1/skills when there is an LLM
// endpoint; without one those endpoints answer 503. Searches that were
// running when the process stopped resume. Their evaluations go through
// the evaluation service (dispatch.Service.EvaluateCached): the result
// cache, then ahead of bulk batches to the local workers or, with none, to
// those on other hosts.
func (s *serve) openSearches(ctx context.Context) error {
	if s.cfg.LLM == nil {
		s.log.Info("searches off: no --llm-url")
		return nil
	}
	gpu := ""
	if s.sup != nil {
		gpu = GPUName(s.sup)
	} else if envs := s.deps.Envs(); len(envs) > 0 {
		gpu = envs[0].GPU // a worker already announced; else the prompts name no GPU
	}
	mgr, mem, err := NewRunner(ctx, *s.cfg.LLM, s.cfg.DataDir, s.b, s.deps.Evals, gpu, s.deps.Tasks, s.log)
	if err != nil {
		return err
	}
	// Assigned only here: a nil *Manager in the interface would not read as
	// "not configured".
	s.mgr, s.deps.Searches, s.deps.Skills = mgr, mgr, mem
	ids, err := mgr.ResumeAll(ctx)
	if err != nil {
		s.log.Warn("resuming searches failed", "err", err)
	} else if len(ids) > 0 {
		s.log.Info("searches resumed", "ids", ids)
	}
	return nil
}

// closeSearches stops the running searches; they stay resumable.
func (s *serve) closeSearches(context.Context) error {
	if s.mgr != nil {
		s.mgr.Close()
	}
	return nil
}

// listen binds the address before anything says "serving": a busy port is
// the one error, not a line after a false start.
func (s *serve) listen(context.Context) error {
	s.srv = gateway.New(s.cfg.Gateway, s.deps)
	ln, err := net.Listen("tcp", s.cfg.Gateway.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", s.cfg.Gateway.Addr, err)
	}
	s.ln = ln
	return nil
}
