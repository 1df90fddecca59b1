// Package tasks is the task registry: the suites loaded from disk at start
// (datasets/ci, datasets/level2, or any directory of KernelBench-format
// files given with --tasks) and the tasks registered over the API, which a
// Store keeps across restarts (a bus KV bucket in `kernelgate serve`).
//
// A task is addressed by an id "SUITE/STEM" (ci/1_add_relu) or, for API
// tasks, the id its registrant chose (default api/<hash prefix>). The
// registry holds sources and builds prompts; it never runs a reference:
// validating a new one is the harness's job (a task check in the sandbox),
// which the gateway asks for before it calls Register.
//
// Imported by the gateway and cmd/kernelgate.
package tasks
