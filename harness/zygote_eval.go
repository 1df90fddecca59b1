package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// eval runs one job on the zygote and waits for its verdict. backstop is
// the last-resort deadline: past it the child's process group is killed and
// a timeout verdict returned, whatever the zygote is doing.
func (z *zygote) eval(ctx context.Context, id string, job eval.Job, backstop time.Duration) (eval.Verdict, error) {
	p := &pendingJob{result: make(chan eval.Verdict, 1)}
	z.mu.Lock()
	if z.dead {
		z.mu.Unlock()
		return eval.Verdict{}, errNotSent
	}
	z.pending[id] = p
	z.mu.Unlock()
	if err := z.send(NewEval(id, job)); err != nil {
		if _, ok := z.abandon(id, p); ok {
			return eval.Verdict{}, fmt.Errorf("%w: %v", errNotSent, err)
		}
		// The zygote died between our write and now; its verdict stands.
		return <-p.result, nil
	}
	timer := time.NewTimer(backstop)
	defer timer.Stop()
	select {
	case v := <-p.result:
		return v, nil
	case <-ctx.Done():
		z.abandon(id, p)
		return eval.Verdict{}, ctx.Err()
	case <-timer.C:
		if v, ok := z.abandon(id, p); !ok {
			return v, nil // the result won the race
		}
		z.log.Warn("no result by the backstop; killed the child", "job", id, "backstop", backstop)
		return harnessVerdict(eval.StatusTimeout, z.spec.mode,
			fmt.Sprintf("no result within %s (timeout_s plus grace); the supervisor killed the evaluation", backstop.Round(time.Second)),
			"Timeout: supervisor backstop"), nil
	}
}

// abandon stops waiting for job id and kills its child. It reports false,
// with the verdict, when a verdict had already been delivered.
func (z *zygote) abandon(id string, p *pendingJob) (eval.Verdict, bool) {
	z.mu.Lock()
	_, ok := z.pending[id]
	if ok {
		delete(z.pending, id)
	}
	z.mu.Unlock()
	if !ok {
		return <-p.result, false
	}
	killGroup(int(p.pid.Load()))
	return eval.Verdict{}, true
}

var errLineTooLong = errors.New("line too long")

// readLine reads one '\n'-terminated line of at most max bytes. A longer
// line is consumed and reported as errLineTooLong, so the stream stays in
// sync for the next record.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > max+1 {
				tooLong, line = true, nil
			}
		}
		switch {
		case err == nil && tooLong:
			return nil, errLineTooLong
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}
