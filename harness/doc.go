// Package harness is the Go side of kernelgate's evaluator: it starts one
// warm Python zygote per GPU (or one in CPU mode), speaks the versioned
// protocol of PROTOCOL.md with it, and turns every evaluation into a Verdict.
//
// The protocol types (protocol.go, verdict.go, options.go) are the source of
// truth for the Python side (harness/py/kgharness/protocol.py); both sides test
// against the golden records in testdata/protocol.
//
// Who may import it: cmd/kernelgate, the batch runner, the gateway and the
// worker. It imports only the standard library and harness/gpu.
package harness
