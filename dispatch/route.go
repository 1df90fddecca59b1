package dispatch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// A job whose options require an environment (eval.Requires) is queued
// on a subject that names it, jobs.eval.<mode>.<gpu>.<torch>.<triton> ("_"
// for a part it leaves open), and a worker pulls only the subjects its own
// environments satisfy: a worker that cannot run a job is never delivered
// it. A job no worker can run would wait in the queue for one; the gateway
// refuses it up front while none is there (Satisfies). Each subject has one
// durable consumer, shared by every worker that serves it: on a work queue
// two consumers may not take the same subject.

// JobSubject is where a job with opts is queued: Subject or
// InteractiveSubject, plus its requirement; a bulk job that requires
// nothing goes to its API key's lane (lanes.go), lane 0 being Subject
// itself.
func JobSubject(mode string, opts eval.Options, interactive bool, lane int) string {
	if interactive {
		return InteractiveSubject(mode) + suffix(opts.Requires)
	}
	if s := suffix(opts.Requires); s != "" {
		return Subject(mode) + s
	}
	return laneSubject(mode, lane)
}

func laneSubject(mode string, lane int) string {
	if lane <= 0 || lane >= Lanes {
		return Subject(mode)
	}
	return fmt.Sprintf("%s.lane%d", Subject(mode), lane)
}

// Satisfies reports whether any of envs can run a job that requires r.
func Satisfies(envs []Env, r *eval.Requires) bool {
	if r == nil || *r == (eval.Requires{}) {
		return true // asks nothing: whoever comes
	}
	want := parts(*r)
	for _, e := range envs {
		have := envParts(e)
		ok := true
		for i := range want {
			ok = ok && (want[i] == "" || want[i] == have[i])
		}
		if ok {
			return true
		}
	}
	return false
}

// Queues are the consumers a worker in mode with envs pulls, in priority
// order: every interactive subject its environments satisfy, then every
// bulk one; the subjects without a requirement first in each, the bulk one
// as its Lanes, which take turns.
func Queues(mode string, envs []Env) []bus.Queue {
	suffixes := []string{""}
	for _, e := range envs {
		have := envParts(e)
		for mask := 1; mask < 8; mask++ { // each non-empty subset of the three parts
			r := [3]string{}
			for i := range r {
				if mask&(1<<i) != 0 {
					r[i] = have[i]
				}
			}
			if s := joinParts(r); s != "" && !slices.Contains(suffixes, s) && !hasGap(r, mask) {
				suffixes = append(suffixes, s)
			}
		}
	}
	slices.Sort(suffixes[1:])
	var out []bus.Queue
	for _, interactive := range []bool{true, false} {
		for _, s := range suffixes {
			if !interactive && s == "" {
				for lane := range Lanes { // they take turns (bus.Queue.Group)
					q := bus.Queue{Durable: Durable(mode), Filter: laneSubject(mode, lane), Group: "lanes"}
					if lane > 0 {
						q.Durable += fmt.Sprintf("-lane%d", lane)
					}
					out = append(out, q)
				}
				continue
			}
			q := bus.Queue{Durable: Durable(mode), Filter: Subject(mode) + s}
			if interactive {
				q = bus.Queue{Durable: InteractiveDurable(mode), Filter: InteractiveSubject(mode) + s}
			}
			q.Durable += strings.NewReplacer(".", "-").Replace(s)
			out = append(out, q)
		}
	}
	return out
}

// envParts are e's GPU model, torch and triton as subject tokens.
func envParts(e Env) [3]string {
	return parts(eval.Requires{GPU: e.GPU, Torch: e.Torch, Triton: e.Triton})
}

// hasGap: a part the subset asks for that this environment does not have
// (a CPU worker has no GPU model): no job with that requirement is its.
func hasGap(r [3]string, mask int) bool {
	for i := range r {
		if mask&(1<<i) != 0 && r[i] == "" {
			return true
		}
	}
	return false
}

func suffix(r *eval.Requires) string {
	if r == nil {
		return ""
	}
	return joinParts(parts(*r))
}

func joinParts(p [3]string) string {
	if p == ([3]string{}) {
		return ""
	}
	out := ""
	for _, x := range p {
		if x == "" {
			x = "_"
		}
		out += "." + x
	}
	return out
}

// parts are r's GPU model, torch and triton as subject tokens: lower case,
// every run of other characters one "-" (so "NVIDIA H200" is "nvidia-h200"
// and "2.11.0+cu130" is "2-11-0": a version's local tag is dropped first).
func parts(r eval.Requires) [3]string {
	return [3]string{token(r.GPU), token(release(r.Torch)), token(release(r.Triton))}
}

func token(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
