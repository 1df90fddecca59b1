// Package harness is the Go side of kernelgate's evaluator: it starts one
// warm Python zygote per GPU (or one in CPU mode), speaks the versioned
// protocol of docs/protocol.md with it, and turns every evaluation into an eval.Verdict.
//
// The protocol records (protocol.go) and the vocabulary they carry (package
// eval: the job, its options, the verdict) are the source of truth for the
// Python side (harness/py/kgharness/protocol.py); both sides test against the
// golden records in testdata/protocol.
//
// Who may import it: whoever runs or configures evaluations (cmd/kernelgate, stack,
// the batch runner, the worker, the gateway's GPU and readiness views).
// Naming a verdict, a task or options is eval's, and harness's own code
// names them there too (eval.Verdict): it re-exports none of them, so there
// is one name for each (imports_test.go). It imports only the standard
// library, eval and harness/gpu.
package harness
