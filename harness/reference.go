package harness

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// A candidate can fail before its task's reference has run: an empty or
// prose answer, a syntax error, a kernel that fails to load while the
// reference waits for it. Blamed on the candidate, a broken reference then
// trains a model on zeros that say nothing about it. So the supervisor
// learns, per task content, whether the reference works, and a candidate
// failure is the candidate's only once it does: a verdict the reference did
// not vouch for (Verdict.ReferenceChecked) is followed by a task check, one
// per task however many evaluations ask, and a reference that fails it turns
// every evaluation of the task into harness_error with the check's
// task_error. An evaluation's own task error is checked the same way: a
// reference that ran out of a GPU other work had filled is not a broken
// task, and the submission is judged again once the check has passed. A
// reference known to fail answers the next evaluations without running
// anything.

const (
	// refKnown bounds how many tasks' outcomes are remembered.
	refKnown = 4096
	// refBrokenFor is how long a failed reference answers for itself: a
	// failure that depended on the moment (a GPU that other work filled) is
	// tried again after it.
	refBrokenFor = 10 * time.Minute
)

// refOutcome is what is known of one task's reference.
type refOutcome struct {
	broken *eval.Verdict // the failed check's verdict; nil: the reference works
	at     time.Time
}

// refCheck is a task check in flight; waiters read v once done is closed.
type refCheck struct {
	done    chan struct{}
	v       *eval.Verdict // as refOutcome.broken
	decided bool
}

// references is the supervisor's memory of task references.
type references struct {
	mu     sync.Mutex
	known  map[string]refOutcome
	checks map[string]*refCheck
	now    func() time.Time
	ran    int // checks started, for tests
}

func newReferences() *references {
	return &references{known: map[string]refOutcome{}, checks: map[string]*refCheck{}, now: time.Now}
}

// lookup says what is known of the task with hash h: ok false when nothing
// (or a failure that has expired); broken nil when its reference works.
func (r *references) lookup(h string) (broken *eval.Verdict, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.known[h]
	if ok && o.broken != nil && r.now().Sub(o.at) > refBrokenFor {
		delete(r.known, h)
		return nil, false
	}
	return o.broken, ok
}

// record stores an outcome, dropping the oldest when a new task finds the
// memory full.
func (r *references) record(h string, broken *eval.Verdict) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.known[h]; !seen && len(r.known) >= refKnown {
		oldest, first := "", time.Time{}
		for k, o := range r.known {
			if oldest == "" || o.at.Before(first) {
				oldest, first = k, o.at
			}
		}
		delete(r.known, oldest)
	}
	r.known[h] = refOutcome{broken: broken, at: r.now()}
}

// learn records what verdict v of job says about its task's reference.
// Only a full-depth check vouches for it (a shape-level one ran the
// reference on the meta device alone), and only a check condemns it: an
// evaluation's task error may be the moment's (Supervisor.Evaluate).
func (r *references) learn(h string, job eval.Job, v eval.Verdict) {
	shapesOnly := job.TaskCheck && job.Check != nil && job.Check.Depth == "shapes"
	switch {
	case job.TaskCheck && v.TaskError != "" && !shapesOnly:
		r.record(h, &v)
	case job.TaskCheck && v.Status == eval.StatusCorrect && v.TaskInfo != nil && v.TaskInfo.Depth == "full":
		r.record(h, nil)
	case !job.TaskCheck && v.ReferenceChecked:
		r.record(h, nil)
	}
}

// blames reports whether v puts a failure on the candidate without its
// reference having shown that it works.
func blames(v eval.Verdict) bool {
	return !v.ReferenceChecked && v.TaskError == "" &&
		v.Status != eval.StatusCorrect && v.Status != eval.StatusHarnessError
}

// ensure returns the failed check's verdict when the task's reference is
// broken, nil when it works; decided is false when the check could not
// decide (the zygote died, ctx ended): the candidate's verdict then stands,
// and nothing is learned. One check runs per task at a time; the others
// wait for it.
func (r *references) ensure(ctx context.Context, h string, check func(context.Context) (eval.Verdict, error)) (broken *eval.Verdict, decided bool) {
	if broken, ok := r.lookup(h); ok {
		return broken, true
	}
	r.mu.Lock()
	c := r.checks[h]
	if c == nil {
		c = &refCheck{done: make(chan struct{})}
		r.checks[h] = c
		r.ran++
		go func() {
			// Not the caller's ctx: a caller that leaves must not cancel the
			// check the others wait for. The check's own timeout bounds it.
			v, err := check(context.WithoutCancel(ctx))
			if err == nil && (v.TaskError != "" || v.Status == eval.StatusCorrect) {
				if v.TaskError != "" {
					c.v = &v
				}
				c.decided = true
				r.record(h, c.v)
			}
			r.mu.Lock()
			delete(r.checks, h)
			r.mu.Unlock()
			close(c.done)
		}()
	}
	r.mu.Unlock()
	select {
	case <-c.done:
		return c.v, c.decided
	case <-ctx.Done():
		return nil, false
	}
}

// taskFailed is the verdict of any job whose task's reference failed check,
// whatever the candidate sent: harness_error with the check's task_error,
// so that every reward function excludes the sample.
func taskFailed(check *eval.Verdict, mode string) eval.Verdict {
	v := harnessVerdict(eval.StatusHarnessError, mode,
		"task error: "+check.TaskError+"\n(the task's reference fails on its own; the submission was not judged)", "")
	v.TaskError = check.TaskError
	return v
}

// refCheckJob is the task check that vouches for job's reference: its
// options, without timing (the check must not take a GPU's timing window
// from the evaluations waiting for it) and at the depth this device can
// afford.
func refCheckJob(job eval.Job) eval.Job {
	o := job.Options
	o.Timing, o.CPUTiming = false, false
	check := eval.Job{Task: job.Task, Options: o, TaskCheck: true, Check: &eval.CheckOptions{Depth: "auto"}, TaskHash: job.TaskHash}
	check.Hash() // its code's: it has none
	return check
}

// blankCode reports whether code holds no submission at all: the harness
// would answer invalid_submission without running anything of it.
func blankCode(code string) bool { return strings.TrimSpace(code) == "" }

// emptySubmission is the verdict for blank code once the task's reference
// is known to work (the harness's own wording for it).
func emptySubmission(mode string) eval.Verdict {
	v := harnessVerdict(eval.StatusInvalidSubmission, mode,
		"empty submission: expected Python source defining class ModelNew", "")
	v.ReferenceChecked = true
	return v
}

// checkCount is how many checks have started.
func (r *references) checkCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ran
}
