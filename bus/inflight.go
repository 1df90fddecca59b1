package bus

// Inflight is the bucket through which identical evaluations in flight share
// one run, whichever gateway queued them and whichever worker runs them
// (dispatch/share.go holds the protocol): under a work key, the job that
// evaluates it; under <work key>.<job id>, each job waiting for that
// evaluation's verdict. Entries live ResultTTL, as long as the results they
// lead to, so a waiter never outlives the result it waits for.
func (b *Bus) Inflight() *Bucket { return b.inflight }
