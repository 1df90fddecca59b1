package worker

import (
	"sync"

	"github.com/kernelgate/kernelgate/dispatch"
)

// unsentLimit bounds the results a worker keeps for redelivery: a full
// disk can hold back every job in flight, never more than a few hundred.
const unsentLimit = 512

// unsent holds results a worker made but could not store or announce (a
// full store, NATS away): the job goes back to the queue, and when it comes
// back to this worker its result is sent again instead of evaluating it
// again (a GPU's minutes per job while the disk is full).
type unsent struct {
	mu    sync.Mutex
	byJob map[string]dispatch.Result
	order []string // oldest first
}

func (u *unsent) put(id string, r dispatch.Result) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byJob == nil {
		u.byJob = map[string]dispatch.Result{}
	}
	if _, ok := u.byJob[id]; !ok {
		u.order = append(u.order, id)
	}
	u.byJob[id] = r
	for len(u.order) > unsentLimit {
		delete(u.byJob, u.order[0])
		u.order = u.order[1:]
	}
}

// take returns and forgets id's result.
func (u *unsent) take(id string) (dispatch.Result, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r, ok := u.byJob[id]
	if ok {
		delete(u.byJob, id)
		for i, o := range u.order {
			if o == id {
				u.order = append(u.order[:i], u.order[i+1:]...)
				break
			}
		}
	}
	return r, ok
}
