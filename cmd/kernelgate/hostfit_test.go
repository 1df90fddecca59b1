package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/hostmem"
)

// fakeHost makes readHostMemory answer m (or err) for the test.
func fakeHost(t *testing.T, m hostmem.Memory, err error) {
	t.Helper()
	old := readHostMemory
	readHostMemory = func() (hostmem.Memory, error) { return m, err }
	t.Cleanup(func() { readHostMemory = old })
}

// jobCmd is a command with the job flags, parsed from args.
func jobCmd(t *testing.T, args ...string) (*jobFlags, *bytes.Buffer) {
	t.Helper()
	var f jobFlags
	cmd := &cobra.Command{Use: "x"}
	var stderr bytes.Buffer
	cmd.SetErr(&stderr)
	f.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return &f, &stderr
}

// eval's and bench's memory_limit_mb: three quarters of the host's memory
// over the slots, at most 32768, unless given.
func TestJobFlagsFitHost(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name   string
		args   []string
		host   uint64
		err    error
		slots  int
		want   int
		stderr string
	}{
		{"this 24 GiB host, 2 slots", nil, 24 * gib, nil, 2, 9216, ""},
		{"one slot: the headroom, at most 32768", nil, 24 * gib, nil, 1, 18432, ""},
		{"a large host: 32768", nil, 512 * gib, nil, 8, eval.DefaultMemoryLimitMB, ""},
		{"a small host: the floor", nil, 8 * gib, nil, 16, eval.MinHostMemoryMB, ""},
		{"given: kept, even above the host", []string{"--memory-limit-mb", "65536"}, 24 * gib, nil, 2, 65536, ""},
		{"host unknown: the harness default, said", nil, 0, errors.New("no /proc"), 2, eval.DefaultMemoryLimitMB, "host memory unknown (no /proc)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeHost(t, hostmem.Memory{Bytes: tt.host, MemTotal: tt.host}, tt.err)
			f, stderr := jobCmd(t, tt.args...)
			o, err := f.options(f.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.fitHost(o, tt.slots).MemoryLimitMB; got != tt.want {
				t.Errorf("memory_limit_mb %d, want %d", got, tt.want)
			}
			if !strings.Contains(stderr.String(), tt.stderr) || (tt.stderr == "" && stderr.Len() > 0) {
				t.Errorf("stderr %q, want %q", stderr, tt.stderr)
			}
		})
	}
}

func TestJobFlagsRequireTriton(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want *bool // RequireTriton sent to the harness
	}{
		{nil, nil},
		{[]string{"--require-triton"}, nil},
		{[]string{"--require-triton=true"}, nil},
		{[]string{"--require-triton=false"}, new(false)},
	} {
		f, _ := jobCmd(t, tt.args...)
		o, err := f.options(f.cmd)
		if err != nil {
			t.Fatal(err)
		}
		if (o.RequireTriton == nil) != (tt.want == nil) || (o.RequireTriton != nil && *o.RequireTriton != *tt.want) {
			t.Errorf("%v: RequireTriton %v, want %v", tt.args, o.RequireTriton, tt.want)
		}
		if o.RequiresTriton() != (tt.want == nil) {
			t.Errorf("%v: RequiresTriton() = %v", tt.args, o.RequiresTriton())
		}
	}
}

// doctor's memory line: on this kind of 2-core 24 GiB host and on a 16-core
// 128 GiB one, the slots' default limits fit in the evaluations' 75%.
func TestDoctorMemoryFigures(t *testing.T) {
	const gib = 1 << 30
	for _, h := range []struct {
		bytes uint64
		slots int
		want  string
	}{
		{24 * gib, 2, "24576 MiB (/proc/meminfo MemTotal); evaluations hold at most 18432 MiB together (75%), 2 slots, memory_limit_mb default 9216 MiB each"},
		{128 * gib, 16, "131072 MiB (/proc/meminfo MemTotal); evaluations hold at most 98304 MiB together (75%), 16 slots, memory_limit_mb default 6144 MiB each"},
	} {
		fakeHost(t, hostmem.Memory{Bytes: h.bytes, MemTotal: h.bytes}, nil)
		f := hostMemoryFigures(h.slots)
		if got := f.String(); got != h.want {
			t.Errorf("%q\nwant %q", got, h.want)
		}
		if f.PerEvalMB*f.Slots > f.HeadroomMB || f.HeadroomMB > f.HostMB*3/4 {
			t.Errorf("%+v: over the headroom", f)
		}
	}
	fakeHost(t, hostmem.Memory{}, errors.New("no /proc"))
	if got := hostMemoryFigures(2).String(); !strings.Contains(got, "host memory unknown (no /proc)") {
		t.Errorf("%q", got)
	}
}
