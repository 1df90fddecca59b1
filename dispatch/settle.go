package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// A batch ends even when the store lost part of it. Settle finds the items
// that have no stored result and nothing in the queue that could still
// answer them (pending.go); each is answered from the evaluation log when
// its row is there (its verdict was made and logged, its stored result
// lost), else as lost. Either answer is stored and announced as a worker's
// result is, first stored wins, so every reader and every stream sees it
// and the batch reaches its end. Neither is logged again: a logged item is
// in the log, and a lost one evaluated nothing.

// RetryLost is the verdict retry of a lost item (harness_error, valid
// false): not the candidate's doing; send it again.
const RetryLost = "lost"

// Ended describes a batch to Settle: what its record says.
type Ended struct {
	ID       string
	Total    int
	Created  time.Time
	TaskName string
	TaskHash string
	RewardFn string
}

// FromLog reads the results of batch b's items that are in the evaluation
// log, by index.
type FromLog func(ctx context.Context, b Ended) (map[int]Result, error)

// Settlement is what Settle answered: items from the log, and items lost.
type Settlement struct {
	Recovered, Lost []int
}

// Settle answers each item of b that nothing can answer any more, from
// fromLog (nil: no log) or as lost. read is when the caller's read of b's
// record returned: a batch's record is stored after its jobs are queued,
// so a look at the queue begun after read sees every job b still has, and
// a batch that is only waiting in the queue is never settled.
func (s *Service) Settle(ctx context.Context, b Ended, read time.Time, fromLog FromLog) (Settlement, error) {
	var out Settlement
	p, err := s.pendingSince(ctx, read)
	if err != nil {
		return out, err
	}
	stored, err := s.Results(ctx, b.ID, b.Total) // after the look: a job acked since left its result
	if err != nil {
		return out, err
	}
	have := make([]bool, b.Total)
	for _, r := range stored {
		have[r.Index] = true
	}
	var missing []int
	for i := range b.Total {
		if !have[i] && !p.has(EvalID(b.ID, i)) {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	logged := map[int]Result{}
	if fromLog != nil {
		if logged, err = fromLog(ctx, b); err != nil {
			return out, fmt.Errorf("dispatch.Settle %s: reading the log: %w", b.ID, err)
		}
	}
	for _, i := range missing {
		r, ok := logged[i]
		if ok {
			r.Index, r.ID, r.FromLog = i, EvalID(b.ID, i), true
		} else {
			r = s.lostResult(b, i)
		}
		won, err := s.answer(ctx, b.ID, r)
		if err != nil {
			return out, err
		}
		switch {
		case !won:
		case ok:
			out.Recovered = append(out.Recovered, i)
		default:
			out.Lost = append(out.Lost, i)
		}
	}
	if len(out.Lost)+len(out.Recovered) > 0 {
		s.log().Warn("batch items without a result ended", "batch", b.ID, "from_log", out.Recovered, "lost", out.Lost)
	}
	return out, nil
}

// answer stores r as its item's result and announces it; won false when
// another result was stored first (that one is announced).
func (s *Service) answer(ctx context.Context, batch string, r Result) (bool, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return false, fmt.Errorf("dispatch.Settle: %w", err)
	}
	got, err := s.Bus.PutResult(ctx, batch, r.Index, data)
	if err != nil {
		return false, &StoreError{"the result store", err}
	}
	if err := s.Bus.Notify(ctx, ResultsSubject(batch), got); err != nil {
		s.log().Warn("announcing a settled item failed; readers find it stored", "batch", batch, "err", err)
	}
	return bytes.Equal(got, data), nil
}

// lostResult answers item i of b, whose job and result are gone: the
// verdict names no code hash, since the code went with the job.
func (s *Service) lostResult(b Ended, i int) Result {
	mode := s.mode()
	if mode == "" {
		mode = eval.TimingCPUInterpreter
	}
	v := eval.Verdict{
		SchemaVersion: eval.SchemaVersion, Status: eval.StatusHarnessError, TimingMode: mode,
		HackFlags: []string{}, Warnings: []string{}, StageMS: map[string]float64{},
		Feedback: "this item's queued job and result were lost from the gateway's store (damage or a restore) and it " +
			"was never logged as evaluated: not the candidate's doing, drop the sample or send it again",
		ErrorSignature: "lost", Retry: RetryLost, TaskName: b.TaskName, TaskHash: b.TaskHash,
	}
	r := Scored(Job{ID: EvalID(b.ID, i), BatchID: b.ID, Index: i, RewardFn: b.RewardFn}, v)
	r.Lost = true
	return r
}
