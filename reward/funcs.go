package reward

import (
	"math"

	"github.com/kernelgate/kernelgate/eval"
)

// AdaExplore is the reward of DESIGN.md's AdaExplore search (the released
// AdaExplore configs):
//
//	no compile, invalid submission, reward_hack   0
//	compiled but not correct                      0.05
//	correct                                       0.4 + 1.2·(clip(s, 0.1, 10) − 0.1)/9.9
//
// A correct kernel scores between 0.4 (s ≤ 0.1) and 1.6 (s ≥ 10); 1.0x scores
// 0.4 + 1.2·0.9/9.9 ≈ 0.509. "Compiled" is the verdict's compiled field, so a
// kernel that compiled and then crashed, timed out or hit a limit earns 0.05.
func AdaExplore(v eval.Verdict) Result {
	j := judge(v)
	switch j.out {
	case outExcluded:
		return excluded(j)
	case outHack, outNoCompile:
		return Result{Reward: 0, Valid: true, Note: j.note}
	case outWrong:
		return Result{Reward: 0.05, Valid: true, Note: j.note}
	}
	s, note := clip(j, 0.1, 10)
	return Result{Reward: 0.4 + 1.2*(s-0.1)/9.9, Valid: true, Note: note}
}

// Kevin is the per-kernel score of Kevin (Baronio et al., "Kevin: Multi-Turn
// RL for Generating CUDA Kernels", arXiv 2507.11948, section 3.2):
//
//	S = 0.3·1{correct} + (T_baseline / T_kernel)·1{correct}
//
// that is 0.3 + s for a correct kernel and 0 otherwise (the paper gives no
// credit for compiling, and 0 to responses that fail its format and
// reward-hacking checks). The speedup is not capped, as in the paper. The
// paper's multi-turn discounting (R_t = Σ γ^(i−t)·S_i, γ = 0.4) is a property
// of an episode, not of one verdict; the trainer applies it.
func Kevin(v eval.Verdict) Result {
	j := judge(v)
	switch j.out {
	case outExcluded:
		return excluded(j)
	case outCorrect:
		return Result{Reward: 0.3 + j.speedup, Valid: true, Note: j.note}
	}
	return Result{Reward: 0, Valid: true, Note: j.note}
}

// KernelGymTiered is the tiered reward of KernelGYM (hkust-nlp/KernelGYM,
// the Dr. Kernel paper's environment, arXiv 2602.05885): the
// calculate_reward_like_kernel function of its reward client, with the
// penalties of its shipped config:
//
//	reward_hack (KernelGYM: decoy kernel)                 −1.0
//	timeout (KernelGYM: evaluation did not complete)      −1.0
//	no compile, invalid submission                        −0.5
//	compiled but not correct (incorrect, crash, limit)    −0.3
//	correct, s < 1.0                                      −0.1
//	correct, 1.0 ≤ s < 1.2                                 0.2
//	correct, 1.2 ≤ s < 1.5  ("Fast@1.2")                   0.4
//	correct, 1.5 ≤ s < 2.0                                 0.6
//	correct, 2.0 ≤ s < 3.0                                 0.8
//	correct, s ≥ 3.0                                       1.0
func KernelGymTiered(v eval.Verdict) Result {
	j := judge(v)
	switch {
	case j.out == outExcluded:
		return excluded(j)
	case j.out == outHack:
		return Result{Reward: -1, Valid: true, Note: j.note}
	case j.timeout:
		return Result{Reward: -1, Valid: true, Note: "timeout: scored as an evaluation that did not complete"}
	case j.out == outNoCompile:
		return Result{Reward: -0.5, Valid: true, Note: j.note}
	case j.out == outWrong:
		return Result{Reward: -0.3, Valid: true, Note: j.note}
	}
	var r float64
	switch s := j.speedup; {
	case s >= 3:
		r = 1.0
	case s >= 2:
		r = 0.8
	case s >= 1.5:
		r = 0.6
	case s >= 1.2:
		r = 0.4
	case s >= 1:
		r = 0.2
	default:
		r = -0.1
	}
	return Result{Reward: r, Valid: true, Note: j.note}
}

// LogSpeedup is kernelgate's own log-scale reward: doubling and halving the
// speed move the reward by the same amount, and every correct kernel outscores
// every incorrect one.
//
//	reward_hack                    −1
//	no compile, invalid submission −0.5
//	compiled but not correct        0
//	correct                         1 + 0.5·clip(log10 s, −1, 1)   (0.5 … 1.5; 1.0x → 1)
//
// The clip range 0.1x … 10x is AdaExplore's.
func LogSpeedup(v eval.Verdict) Result {
	j := judge(v)
	switch j.out {
	case outExcluded:
		return excluded(j)
	case outHack:
		return Result{Reward: -1, Valid: true, Note: j.note}
	case outNoCompile:
		return Result{Reward: -0.5, Valid: true, Note: j.note}
	case outWrong:
		return Result{Reward: 0, Valid: true, Note: j.note}
	}
	s, note := clip(j, 0.1, 10)
	return Result{Reward: 1 + 0.5*math.Log10(s), Valid: true, Note: note}
}

// Binary is 1 for a correct kernel and 0 for anything else; it ignores speed,
// so a correct verdict with a null speedup needs no note.
func Binary(v eval.Verdict) Result {
	j := judge(v)
	switch j.out {
	case outExcluded:
		return excluded(j)
	case outCorrect:
		return Result{Reward: 1, Valid: true}
	}
	return Result{Reward: 0, Valid: true, Note: j.note}
}
