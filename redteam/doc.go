// Package redteam attacks a task suite with generated reward hacks and
// reports, class by class, which the harness caught (`kernelgate redteam`,
// POST /v1/redteam).
//
// Each attack class is one Python template under attacks/, embedded in the
// binary. Generate turns a task's honest solution into one variant per
// class by program transformation: the solution's ModelNew is renamed and
// the template, which wraps or replaces it, is appended. The variants and
// the untransformed solutions (the controls) are evaluated through the
// normal path by the caller (the CLI's supervisor, the gateway's queue);
// Build judges the verdicts: a variant judged correct, given a speedup or
// carrying a planted secret is a miss, a control not correct is a failure.
//
// Imported by cmd/kernelgate and gateway; it imports eval and datasets.
package redteam
