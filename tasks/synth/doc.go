// Package synth generates synthetic KernelBench-format tasks for the adapt
// phase of a kernel search: random but valid chains of torch operators
// (a GEMM, batched GEMM, convolution or plain input, then 1–4 epilogues)
// written as task files an LLM can write Triton kernels for.
//
// A chain is built op by op from a catalogue (catalogue.go and its
// neighbours). Each op says when it fits the current state (shape, dtype,
// typical magnitude, whether a nonlinearity came since the last GEMM) and
// how it changes it, so every chain is valid by construction; the tests
// run the small tasks in Python to hold the tracker to the emitted code.
// The rules that keep tasks from being degenerate (a sum over a layernorm
// is constant, a wide fp16 softmax is below tolerance, a sum right after a
// GEMM folds into a GEMV) live in the ops' fit functions.
//
// Output is a pure function of (seed, task index, size): task i draws from
// its own PCG stream, so it does not depend on how many tasks are made.
//
// Imported by cmd/kernelgate (`kernelgate tasks synth`).
package synth
