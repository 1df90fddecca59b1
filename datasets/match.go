package datasets

import (
	"fmt"
	"regexp"
	"strings"
)

// Pair is a kernel file matched to its task. A task may have several
// kernels (samples); a kernel belongs to at most one task.
type Pair struct {
	Task   Task
	Kernel string // path of the kernel file
	By     string // "stem", "name" or "number": which rule matched
}

// Unmatched is a kernel no rule could place, and why.
type Unmatched struct {
	Kernel string
	Reason string
}

// Matching is the outcome of Match; nothing is silently dropped.
type Matching struct {
	Pairs            []Pair
	UnmatchedKernels []Unmatched
	UnmatchedTasks   []Task // tasks no kernel matched
}

var (
	// levelPrefix is "level2_" or "level_2_" in front of a kernel's name.
	levelPrefix = regexp.MustCompile(`^level_?\d+_`)
	// problemNum is KernelBench's generated layout: level_2_problem_19_sample_0_kernel.
	problemNum = regexp.MustCompile(`(?:^|_)problem_(\d+)(?:_|$)`)
	leadingNum = regexp.MustCompile(`^(\d+)(?:_|$)`)
)

// Match pairs kernel files with tasks, trying in order:
//  1. stem: the kernel's stem equals the task's ("19_gemm_relu.py");
//  2. name: the task's stem appears in the kernel's as whole "_"-separated
//     words ("19_gemm_relu_triton.py", "level2_19_gemm_relu.py"); the
//     longest such task wins;
//  3. number: the kernel's problem number ("problem_19" anywhere, else its
//     leading number after an optional level prefix) equals a task's
//     leading number, when exactly one task has it.
func Match(tasks []Task, kernels []string) Matching {
	var m Matching
	used := make(map[string]bool, len(tasks))
	for _, k := range kernels {
		p, reason := matchOne(tasks, k)
		if reason != "" {
			m.UnmatchedKernels = append(m.UnmatchedKernels, Unmatched{Kernel: k, Reason: reason})
			continue
		}
		used[p.Task.Path] = true
		m.Pairs = append(m.Pairs, p)
	}
	for _, t := range tasks {
		if !used[t.Path] {
			m.UnmatchedTasks = append(m.UnmatchedTasks, t)
		}
	}
	return m
}

func matchOne(tasks []Task, kernel string) (Pair, string) {
	stem := Stem(kernel)
	for _, t := range tasks {
		if t.Name == stem {
			return Pair{Task: t, Kernel: kernel, By: "stem"}, ""
		}
	}
	if t, ok := byName(tasks, stem); ok {
		return Pair{Task: t, Kernel: kernel, By: "name"}, ""
	}
	num := kernelNumber(stem)
	if num == "" {
		return Pair{}, "no task name or problem number in the file name"
	}
	var found []Task
	for _, t := range tasks {
		if taskNumber(t.Name) == num {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 1:
		return Pair{Task: found[0], Kernel: kernel, By: "number"}, ""
	case 0:
		return Pair{}, fmt.Sprintf("no task numbered %s", num)
	default:
		return Pair{}, fmt.Sprintf("%d tasks are numbered %s", len(found), num)
	}
}

// byName finds the longest task whose words appear, contiguous, in stem.
func byName(tasks []Task, stem string) (Task, bool) {
	padded := "_" + stem + "_"
	var best Task
	bestLen, ties := 0, 0
	for _, t := range tasks {
		if t.Name == "" || !strings.Contains(padded, "_"+t.Name+"_") {
			continue
		}
		switch n := len(t.Name); {
		case n > bestLen:
			best, bestLen, ties = t, n, 1
		case n == bestLen:
			ties++
		}
	}
	return best, bestLen > 0 && ties == 1
}

func kernelNumber(stem string) string {
	if m := problemNum.FindStringSubmatch(stem); m != nil {
		return trimZeros(m[1])
	}
	return taskNumber(levelPrefix.ReplaceAllString(stem, ""))
}

func taskNumber(name string) string {
	if m := leadingNum.FindStringSubmatch(name); m != nil {
		return trimZeros(m[1])
	}
	return ""
}

// trimZeros makes "019" and "19" the same problem.
func trimZeros(n string) string {
	if t := strings.TrimLeft(n, "0"); t != "" {
		return t
	}
	return "0"
}
