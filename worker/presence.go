package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

// Announcement is what a running worker process says about itself in the
// bus's workers bucket: a gateway with no workers of its own (serve
// --workers 0) is ready while one is there, and serves cached verdicts made
// in their environments.
type Announcement struct {
	ID      string         `json:"id"`
	Host    string         `json:"host"`
	Mode    string         `json:"mode"`  // timing mode: gpu or cpu_interpreter
	Slots   int            `json:"slots"` // evaluations at once
	Up      bool           `json:"up"`    // a zygote is up: it can take jobs now
	Envs    []dispatch.Env `json:"envs"`
	Started time.Time      `json:"started"`
	At      time.Time      `json:"at"` // the last refresh
}

// AnnounceEvery is how often a worker refreshes its announcement; the
// bucket forgets one bus.WorkerTTL after its last refresh.
const AnnounceEvery = 10 * time.Second

// Announce keeps id's announcement in the bus until ctx ends, then removes
// it (a worker killed outright drops out after bus.WorkerTTL).
func Announce(ctx context.Context, b *bus.Bus, p dispatch.Pool, ev Evaluator, id, host string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	started := time.Now().UTC()
	put := func(c context.Context) error {
		a := Announcement{ID: id, Host: host, Mode: ev.Mode(), Slots: Slots(ev), Up: Ready(ev) == nil,
			Envs: dispatch.PoolEnvs(p), Started: started, At: time.Now().UTC()}
		data, err := json.Marshal(a)
		if err != nil {
			return err
		}
		_, err = b.Workers().Put(c, id, data)
		return err
	}
	tick := time.NewTicker(AnnounceEvery)
	defer tick.Stop()
	for {
		if err := put(ctx); err != nil && ctx.Err() == nil {
			log.Warn("announce failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := b.Workers().Delete(dctx, id); err != nil {
				log.Warn("could not withdraw the announcement; it expires", "err", err, "ttl", bus.WorkerTTL)
			}
			return nil
		case <-tick.C:
		}
	}
}

// Present lists the workers announced now.
func Present(ctx context.Context, b *bus.Bus) ([]Announcement, error) {
	vals, err := b.Workers().Values(ctx, ">")
	if err != nil {
		return nil, fmt.Errorf("worker.Present: %w", err)
	}
	out := make([]Announcement, 0, len(vals))
	for _, v := range vals {
		var a Announcement
		if json.Unmarshal(v, &a) == nil && a.ID != "" {
			out = append(out, a)
		}
	}
	return out, nil
}

// Roster answers a gateway's two questions about remote workers, from the
// announcements, read at most every refresh (a /readyz probe or a cache
// lookup per request would otherwise scan the bucket).
type Roster struct {
	bus     *bus.Bus
	refresh time.Duration
	now     func() time.Time

	mu   sync.Mutex
	at   time.Time // the last read
	good time.Time // the last read that answered
	list []Announcement
	err  error
}

// NewRoster reads b's announcements at most once per refresh.
func NewRoster(b *bus.Bus, refresh time.Duration) *Roster {
	return &Roster{bus: b, refresh: refresh, now: time.Now}
}

func (r *Roster) current() ([]Announcement, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() || r.now().Sub(r.at) >= r.refresh {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		list, err := Present(ctx, r.bus)
		cancel()
		now := r.now()
		r.at = now
		switch {
		case err == nil:
			r.list, r.err, r.good = list, nil, now
		case !r.good.IsZero() && now.Sub(r.good) < bus.WorkerTTL:
			// A read that fails (the bucket's leader lost and a new one
			// being elected) keeps what was announced, as long as an
			// announcement lives. Forgetting it made the timing mode unknown
			// for a moment, and the jobs queued meanwhile went to
			// jobs.eval.gpu, which CPU workers never pull: they stalled
			// (scripts/measure/leaderkill).
		default:
			r.list, r.err = nil, err
		}
	}
	return r.list, r.err
}

// Ready is nil while a worker that can take jobs is announced.
func (r *Roster) Ready() error {
	list, err := r.current()
	if err != nil {
		return err
	}
	for _, a := range list {
		if a.Up {
			return nil
		}
	}
	if len(list) == 0 {
		return errors.New("no worker has announced itself (start `kernelgate worker --nats URL` on a GPU host)")
	}
	return errors.New("the announced workers have no zygote up")
}

// Envs are the announced workers' environments, each once.
func (r *Roster) Envs() []dispatch.Env {
	list, _ := r.current()
	seen := map[dispatch.Env]bool{}
	var out []dispatch.Env
	for _, a := range list {
		for _, e := range a.Envs {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// Mode is the announced workers' timing mode when they agree, else "".
func (r *Roster) Mode() string {
	list, _ := r.current()
	mode := ""
	for _, a := range list {
		if mode != "" && a.Mode != mode {
			return ""
		}
		mode = a.Mode
	}
	return mode
}

// Stats is one entry per announced worker (labelled by its id): whether it
// is up and its slots, for GET /v1/gpus and the worker metrics of a gateway
// without workers of its own. What each has in flight is not announced.
func (r *Roster) Stats() []harness.ZygoteStats {
	list, _ := r.current()
	out := make([]harness.ZygoteStats, 0, len(list))
	for _, a := range list {
		out = append(out, harness.ZygoteStats{Label: a.ID, Up: a.Up, Concurrency: a.Slots})
	}
	return out
}

// GPUs lists no device (they are on other hosts) and says how many workers
// are announced.
func (r *Roster) GPUs() gpu.Info {
	list, err := r.current()
	if err != nil {
		return gpu.Info{Reason: "workers on other hosts: " + err.Error()}
	}
	return gpu.Info{Reason: fmt.Sprintf("workers on other hosts: %d announced", len(list))}
}
