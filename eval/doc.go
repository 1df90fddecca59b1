// Package eval is the vocabulary of an evaluation: the task, the job, its
// options, and the verdict with its statuses and flags, as the Go side and
// the Python harness exchange them (docs/protocol.md; SchemaVersion).
// It runs nothing: harness runs evaluations, worker queues them, gateway
// serves them; they and everyone who only names them import this package.
//
// A leaf: it imports only the standard library.
package eval
