package dispatch

import (
	"slices"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

var (
	h200 = Env{Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H200"}
	h100 = Env{Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H100 80GB HBM3"}
)

func requiring(r eval.Requires) eval.Options {
	o := eval.DefaultOptions()
	o.Requires = &r
	return o
}

func TestJobSubjectsNameTheirRequirement(t *testing.T) {
	for _, tt := range []struct {
		r    *eval.Requires
		want string
	}{
		{nil, "jobs.eval.gpu"},
		{&eval.Requires{}, "jobs.eval.gpu"},
		{&eval.Requires{GPU: "NVIDIA H200"}, "jobs.eval.gpu.nvidia-h200._._"},
		{&eval.Requires{GPU: "nvidia-h200", Torch: "2.11.0+cu130"}, "jobs.eval.gpu.nvidia-h200.2-11-0._"},
		{&eval.Requires{Triton: "3.6.0"}, "jobs.eval.gpu._._.3-6-0"},
	} {
		o := eval.DefaultOptions()
		o.Requires = tt.r
		if got := JobSubject(eval.TimingGPU, o, false, 0); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.r, got, tt.want)
		}
	}
	if got := JobSubject(eval.TimingGPU, requiring(eval.Requires{GPU: "H200"}), true, 2); got != "jobs.interactive.gpu.h200._._" {
		t.Errorf("interactive: %s", got)
	}
}

// Every requirement an environment meets is a subject its worker pulls, and
// only those: a job requiring another GPU or toolchain is never delivered.
func TestQueuesAreWhatTheEnvironmentsSatisfy(t *testing.T) {
	filters := func(envs ...Env) []string {
		var out []string
		for _, q := range Queues(eval.TimingGPU, envs) {
			out = append(out, q.Filter)
		}
		return out
	}
	h200Only := filters(h200)
	// 8 interactive, the bulk lanes, 7 bulk requirements.
	if len(h200Only) != 15+Lanes || h200Only[0] != "jobs.interactive.gpu" || h200Only[8] != "jobs.eval.gpu" ||
		h200Only[9] != "jobs.eval.gpu.lane1" {
		t.Fatalf("queues %v", h200Only)
	}
	reqs := []eval.Requires{
		{GPU: "NVIDIA H200"}, {Torch: "2.11.0"}, {Triton: "3.6.0"}, {GPU: "nvidia h200", Torch: "2.11.0"},
		{GPU: "NVIDIA H200", Triton: "3.6.0+git"}, {Torch: "2.11.0", Triton: "3.6.0"},
		{GPU: "NVIDIA H200", Torch: "2.11.0", Triton: "3.6.0"},
	}
	for _, r := range reqs {
		for _, interactive := range []bool{true, false} {
			if s := JobSubject(eval.TimingGPU, requiring(r), interactive, 3); !slices.Contains(h200Only, s) {
				t.Errorf("an H200 worker does not pull %s (%+v)", s, r)
			}
		}
		if !Satisfies([]Env{h200}, &r) {
			t.Errorf("%+v not satisfied by %+v", r, h200)
		}
	}
	for _, r := range []eval.Requires{{GPU: "NVIDIA H100 80GB HBM3"}, {Torch: "2.10.0"}, {GPU: "NVIDIA H200", Triton: "3.5.0"}} {
		if s := JobSubject(eval.TimingGPU, requiring(r), false, 1); slices.Contains(h200Only, s) {
			t.Errorf("an H200 worker pulls %s (%+v)", s, r)
		}
		if Satisfies([]Env{h200}, &r) {
			t.Errorf("%+v satisfied by %+v", r, h200)
		}
	}
	both := filters(h200, h100)
	if len(both) != 2*(8+4)-1+Lanes { // the H100's own GPU subsets; the toolchain ones are shared
		t.Fatalf("%d queues for two GPU models: %v", len(both), both)
	}
	if cpu := filters(Env{Torch: "2.11.0", Triton: "3.6.0"}); len(cpu) != 7+Lanes {
		t.Fatalf("a CPU worker (no GPU model) pulls %v", cpu)
	}
	seen := map[string]bool{}
	for _, q := range Queues(eval.TimingGPU, []Env{h200, h100}) {
		if seen[q.Durable] {
			t.Fatalf("durable %s twice", q.Durable)
		}
		seen[q.Durable] = true
	}
	// Every lane is pulled, as one group; a lane out of range is lane 0.
	plain := eval.DefaultOptions()
	groups := map[string]string{}
	for _, q := range Queues(eval.TimingGPU, []Env{h200}) {
		groups[q.Filter] = q.Group
	}
	for lane := range Lanes + 1 {
		s := JobSubject(eval.TimingGPU, plain, false, lane)
		if g, ok := groups[s]; !ok || g != "lanes" {
			t.Errorf("lane %d: %s pulled %v in group %q", lane, s, ok, g)
		}
	}
}
