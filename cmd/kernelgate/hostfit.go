package main

import (
	"fmt"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/hostmem"
)

// readHostMemory reads this host's memory; tests replace it.
var readHostMemory = hostmem.Host

// evalSlots is how many evaluations sup runs at once (every zygote's concurrency).
func evalSlots(sup *harness.Supervisor) int {
	n := 0
	for _, z := range sup.Stats() {
		n += z.Concurrency
	}
	return n
}

// hostMemoryMB is each of slots' share of the host's memory
// (eval.HostMemoryMB), and the host figures it came from for the log. A
// host whose memory cannot be read gets eval.DefaultMemoryLimitMB and the error.
func hostMemoryMB(slots int) (int, hostmem.Memory, error) {
	m, err := readHostMemory()
	if err != nil {
		return eval.DefaultMemoryLimitMB, m, err
	}
	return eval.HostMemoryMB(m.Bytes, slots), m, nil
}

// searchOptions is what a search started here evaluates with: the harness
// defaults, memory_limit_mb held to the host's share per slot as serve
// holds a request's.
func searchOptions(sup *harness.Supervisor) *eval.Options {
	o := eval.DefaultOptions()
	if mb, _, _ := hostMemoryMB(evalSlots(sup)); mb < o.MemoryLimitMB {
		o.MemoryLimitMB = mb
	}
	return &o
}

// memoryFigures is doctor's account of the host memory evaluations may hold.
type memoryFigures struct {
	HostMB     int    `json:"host_mb"`
	Source     string `json:"source"` // what set HostMB: MemTotal or a cgroup's memory.max
	Slots      int    `json:"slots"`
	HeadroomMB int    `json:"evaluations_mb"`  // what evaluations may hold together
	PerEvalMB  int    `json:"memory_limit_mb"` // serve's --max-memory-mb default
	Error      string `json:"error,omitempty"` // the host's memory could not be read
}

func hostMemoryFigures(slots int) *memoryFigures {
	per, m, err := hostMemoryMB(slots)
	f := &memoryFigures{HostMB: int(m.Bytes >> 20), Source: m.String(), Slots: slots, PerEvalMB: per,
		HeadroomMB: eval.HostHeadroomMB(m.Bytes)}
	if err != nil {
		f.Error = err.Error()
	}
	return f
}

func (f *memoryFigures) String() string {
	if f.Error != "" {
		return fmt.Sprintf("host memory unknown (%s): memory_limit_mb defaults to %d", f.Error, f.PerEvalMB)
	}
	return fmt.Sprintf("%s; evaluations hold at most %d MiB together (%d%%), %d slots, memory_limit_mb default %d MiB each",
		f.Source, f.HeadroomMB, eval.HostHeadroomPercent, f.Slots, f.PerEvalMB)
}
