package main

import (
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
