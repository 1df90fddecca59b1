package bus

// Requests is the bucket that makes a retried request idempotent
// (gateway/idempotency.go): under a hash of the client, the endpoint and the
// key the client named, the batch its first request made. Entries live
// ResultTTL: a retry finds the first answer for as long as that answer is
// readable, and no longer.
func (b *Bus) Requests() *Bucket { return b.requests }
