package dispatch

import (
	"context"
	"log/slog"
)

// rollback takes back what Submit queued for a batch it then refused: the
// jobs it queued and the items it registered as waiting for an identical
// evaluation. The client was told no; work left behind would run for a
// batch no one can read. Best effort: what cannot be taken back (the store
// refusing even that, a worker already running a job) runs, and its
// answers land under the refused batch's id, readable by no one and gone
// after the result TTL. Items already answered (from the cache, or as
// invalid submissions) were logged as the verdicts they are.
func (s *Service) rollback(ctx context.Context, log *slog.Logger, groups []*group) {
	b := s.Bus
	withdrawn := 0
	for _, g := range groups {
		if g.seq != 0 {
			if err := b.WithdrawJob(ctx, g.seq); err != nil {
				log.Warn("taking back a job of a refused batch failed; it runs for no one", "job", g.jobs[0].ID, "err", err)
			} else {
				withdrawn++
			}
		}
		waiting := g.jobs
		if !g.joined {
			waiting = g.jobs[1:]
		}
		if g.key != "" && (g.joined || g.seq != 0) && len(waiting) > 0 {
			if err := Unwait(ctx, b, g.key, waiting); err != nil {
				log.Warn("removing waiting items of a refused batch failed", "err", err)
			}
		}
	}
	if withdrawn > 0 {
		log.Info("refused batch: its queued jobs taken back", "jobs", withdrawn)
	}
}
