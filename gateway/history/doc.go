// Package history keeps what the dashboard draws over time: verdicts by
// status, evaluations per second, rewards per reward function, queue depth,
// GPU use, and per-task figures, for the last hour at 5 s and the last day
// at one minute.
//
// The gateway feeds it each result it observes (Add) and a sample of its
// queue and GPUs every few seconds (Sample); at start it is rebuilt from the
// Parquet evaluation log (Rebuild), so that a restart keeps the day's
// verdicts and rewards. Queue and GPU samples are not in the log: they are
// kept in memory and saved beside the log (Save, Load).
//
// Memory is bounded: a fixed number of buckets, and per bucket a bounded
// sample of rewards and speedups (a reservoir), from which quantiles are
// read. Counts, sums and means are exact.
//
// It imports nothing of the gateway; gateway/history.go wires it.
package history
