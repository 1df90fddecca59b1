// Package check validates task suites (`kernelgate tasks check`): every
// task goes through the harness's sandboxed task check (protocol 1.2), and
// a task's hand-written solution, when it has one, must be judged correct.
// A rejected task always carries the reason. Imported by cmd.
package check
