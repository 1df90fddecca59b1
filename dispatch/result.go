package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/reward"
)

// PublishResult logs r's verdict on events.evaluation (event id = job id),
// stores r in the batch's results and then announces it on the batch's
// results subject: whoever hears of a result can read it back. The gateway
// uses it too, for verdicts it makes itself (invalid_submission) and for
// answers from the cache. A task check is not logged: it evaluated no
// candidate, so it is no row of the evaluations table; nor is an Unlogged
// job, whose queuer logs it.
func PublishResult(ctx context.Context, b *bus.Bus, job Job, r Result) error {
	if !job.TaskCheck && !job.Unlogged {
		rew, valid, wait, exec := r.Reward, r.Valid, r.QueueWaitMS, r.ExecMS
		ev := event.Evaluation{
			EventID: job.ID, Time: time.Now().UTC(), EvalID: job.ID, BatchID: job.BatchID, TaskID: job.TaskID, TaskSource: job.Task.Source,
			RequestID: job.RequestID, ClientID: job.ClientID,
			Code: job.Code, Completion: job.Completion, Prompt: job.Prompt, RewardFn: rewardName(job.RewardFn),
			SourceEvalID: r.Source, Options: &job.Options,
			Reward: &rew, Valid: &valid, Cached: r.Cached, Verdict: r.Verdict,
		}
		if !r.Cached && !r.Shared { // a cached or shared answer waited in no queue and ran nothing
			ev.QueueWaitMS, ev.ExecMS = &wait, &exec
		}
		if err := event.Publish(ctx, b, ev); err != nil {
			return fmt.Errorf("dispatch.PublishResult: %w", err)
		}
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("dispatch.PublishResult: %w", err)
	}
	// A redelivered job gets the first stored result back: announce that one.
	if data, err = b.PutResult(ctx, job.BatchID, job.Index, data); err != nil {
		return fmt.Errorf("dispatch.PublishResult: %w", err)
	}
	if err := b.Notify(ctx, ResultsSubject(job.BatchID), data); err != nil {
		return fmt.Errorf("dispatch.PublishResult: %w", err)
	}
	return nil
}

func rewardName(n string) string {
	if n == "" {
		return reward.Default
	}
	return n
}

// HarnessError is the verdict for a job the harness could not evaluate.
func HarnessError(mode string, job Job, err error) eval.Verdict {
	return Verdict(mode, job, eval.StatusHarnessError, err.Error(), "harness_error")
}

// Verdict is a verdict made outside the harness (no child ran), shaped like
// a child's: empty lists rather than null, the job's hashes filled.
func Verdict(mode string, job Job, status eval.Status, feedback, signature string) eval.Verdict {
	if mode == "" {
		mode = eval.TimingCPUInterpreter
	}
	job.Hash() // the ones it carries; made here only for a job made without them
	return eval.Verdict{
		SchemaVersion: eval.SchemaVersion, Status: status, TimingMode: mode,
		HackFlags: []string{}, Warnings: []string{}, StageMS: map[string]float64{},
		Feedback: feedback, ErrorSignature: signature, TaskName: job.Task.Name,
		TaskHash: job.TaskHash, CodeHash: job.CodeHash,
	}
}

// DeadlineVerdict answers an item its request's deadline_s left behind: not
// the candidate's doing (harness_error, valid false), never cached.
func DeadlineVerdict(mode string, job Job) eval.Verdict {
	v := Verdict(mode, job, eval.StatusHarnessError,
		"the request's deadline (deadline_s) passed before this item's evaluation finished; it was stopped: "+
			"not the candidate's doing, drop the sample", "")
	v.Retry = "deadline"
	return v
}
