// Package stack assembles kernelgate's processes from their components,
// each with Start, Run and Stop (component.go), started in order and
// stopped in reverse: serve (Serve: the bus, tasks and episodes, the local
// harness, the Parquet sink and compaction, the workers, searches, the HTTP
// server) and a GPU host's worker (Worker). On SIGTERM the HTTP server
// drains first (its requests wait on the workers), then searches stop
// (resumable), then the workers (a job cut short goes back to the queue),
// then the sink writes what they logged, then the harness and the bus
// close. cmd/kernelgate turns flags into the configs here.
package stack
