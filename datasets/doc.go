// Package datasets loads task suites — directories of KernelBench-format
// Python files — and matches candidate kernel files to their tasks.
//
// It only reads files: whether a task is valid Python with a Model is the
// Python evaluator's call (a task_error in the verdict). Imported by
// cmd/kernelgate and the gateway.
package datasets
