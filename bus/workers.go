package bus

import "time"

// WorkerTTL is how long a worker's announcement outlives its last refresh:
// a worker killed with -9 drops out of the roster within it.
const WorkerTTL = 30 * time.Second

// Workers is the bucket where each worker process announces itself (its
// timing mode, slots and environments; worker/presence.go), so that a
// gateway without workers of its own knows whether any can take jobs.
func (b *Bus) Workers() *Bucket { return b.workers }
