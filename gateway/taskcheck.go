package gateway

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

// awaitTaskCheck reads the check's verdict from f (and closes it), for at
// most limit: status correct means the task is valid. ctx ends only when
// the server shuts down.
func (s *Server) awaitTaskCheck(ctx context.Context, f *dispatch.Follower, limit time.Duration) (eval.Verdict, *apiError) {
	defer f.Close()
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	r, err := f.Next(wctx)
	switch {
	case ctx.Err() != nil:
		return eval.Verdict{}, newError(CodeNotReady, "", "the server shut down before the task check finished; register the task again")
	case wctx.Err() != nil:
		return eval.Verdict{}, newError(CodeWaitTimeout, "", "the task check did not finish within %s", limit)
	case err != nil:
		s.log.Error("receiving the task check failed", "err", err)
		return eval.Verdict{}, newError(CodeInternal, "", "receiving the task check failed")
	}
	v := r.Verdict
	if v.Status != eval.StatusCorrect && v.TaskError == "" {
		// The check could not run at all (no zygote, a worker's last
		// delivery failed): not the task's fault.
		return v, newError(CodeNotReady, "", "the task check could not run: %s", firstLine(v.Feedback))
	}
	return v, nil
}

// taskCheckReason is why a task check refused a task, for the 422 message.
func taskCheckReason(v eval.Verdict) string {
	if v.TaskError != "" {
		return v.TaskError
	}
	return fmt.Sprintf("%s: %s", v.Status, firstLine(v.Feedback))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
