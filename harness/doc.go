// Package harness is the Go side of kernelgate's evaluator: it starts one
// warm Python zygote per GPU (or one in CPU mode), speaks the versioned
// protocol of docs/protocol.md with it, and turns every evaluation into a Verdict.
//
// The protocol records (protocol.go) and the vocabulary they carry (package
// eval: the job, its options, the verdict) are the source of truth for the
// Python side (harness/py/kgharness/protocol.py); both sides test against the
// golden records in testdata/protocol.
//
// Who may import it: whoever runs or configures evaluations (cmd/kernelgate, stack,
// the batch runner, the worker, the gateway's GPU and readiness views).
// Naming a verdict, a task or options is eval's: imports_test.go fails a
// package that imports harness for those alone (vocab.go's aliases are for
// importers not yet moved). It imports only the standard library, eval and
// harness/gpu.
package harness
