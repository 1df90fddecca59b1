// Package reward turns an eval.Verdict into the number an RL trainer or the
// AdaExplore search optimises (DESIGN.md, "Reward", step 5).
//
// The verdict carries the raw parts (status, compiled, correct, speedup, hack
// flags); a named Func maps them to a Result. The names are part of the HTTP
// contract (the `reward_fn` field of POST /v1/rewards): adaexplore, kevin,
// kernelgym_tiered, log_speedup and binary. README.md in this folder gives
// every formula with its source, and says which parts kernelgate defined.
//
// Rules every function keeps:
//
//   - A verdict with status reward_hack, or with any hack flag, never earns
//     more than a kernel that does not compile, and never a speed component.
//   - harness_error, a non-empty task_error, an unknown status and a correct
//     verdict whose speedup is NaN, infinite or not positive are not the
//     candidate's doing: Result.Valid is false and Reward is 0, and trainers
//     should mask the sample rather than learn from the 0.
//   - A correct verdict with speedup null (CPU interpreter mode, or timing
//     off) is scored as 1.0x by the speed-based functions, and Note says so.
//   - For correct verdicts every function is non-decreasing in speedup.
//
// Who imports it: the gateway (rewards, episodes, the OpenRLHF adapter), the
// rollout search (node rewards), cmd/kernelgate (flags that name a reward)
// and export (a logged row's valid, where its publisher did not say).
// It imports only the standard library and harness.
package reward
