package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

// presentPool is a pool whose one zygote is up (or not) on an H200.
type presentPool struct {
	hello bool
	stats []harness.ZygoteStats
}

func (p presentPool) Hello() (harness.Hello, bool) {
	return harness.Hello{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0+local"}, p.hello
}
func (p presentPool) GPUs() gpu.Info {
	return gpu.Info{Devices: []gpu.Device{{Index: 0, Name: "NVIDIA H200"}, {Index: 1, Name: "NVIDIA H200"}, {Index: 2, Name: "NVIDIA A100"}}}
}
func (p presentPool) Stats() []harness.ZygoteStats { return p.stats }

func (p presentPool) Evaluate(context.Context, eval.Job) (eval.Verdict, error) {
	return eval.Verdict{}, nil
}
func (p presentPool) Mode() string { return eval.TimingGPU }

func TestAnnouncedWorkersMakeARemoteGatewayReady(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir()}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	roster := NewRoster(b, 0) // read every time
	if err := roster.Ready(); err == nil || !strings.Contains(err.Error(), "no worker") {
		t.Fatalf("Ready with nobody announced = %v", err)
	}
	down := presentPool{hello: true, stats: []harness.ZygoteStats{{Label: "gpu0", Concurrency: 16}}}
	up := presentPool{hello: true, stats: []harness.ZygoteStats{{Label: "gpu0", Up: true, Concurrency: 16}}}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Announce(ctx, b, down, down, "host-a-1", "host-a", testLogger()) }()
	waitFor(t, func() bool { l, _ := Present(t.Context(), b); return len(l) == 1 })
	if err := roster.Ready(); err == nil || !strings.Contains(err.Error(), "no zygote up") {
		t.Fatalf("Ready with a worker whose zygote is down = %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l, _ := Present(t.Context(), b); len(l) != 0 {
		t.Fatalf("a stopped worker is still announced: %+v", l)
	}

	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = Announce(ctx, b, up, up, "host-b-1", "host-b", testLogger()) }()
	waitFor(t, func() bool { return roster.Ready() == nil })
	list, err := Present(t.Context(), b)
	if err != nil || len(list) != 1 {
		t.Fatalf("Present = %+v, %v", list, err)
	}
	a := list[0]
	if a.ID != "host-b-1" || a.Host != "host-b" || a.Mode != eval.TimingGPU || a.Slots != 16 || !a.Up {
		t.Fatalf("announcement %+v", a)
	}
	want := dispatch.Env{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H200"}
	if envs := roster.Envs(); len(envs) != 1 || envs[0] != want {
		t.Fatalf("Envs = %+v, want [%+v]", envs, want)
	}
	if roster.Mode() != eval.TimingGPU {
		t.Fatalf("Mode = %q", roster.Mode())
	}
	// What GET /v1/gpus and the worker metrics show of them.
	if st := roster.Stats(); len(st) != 1 || st[0].Label != "host-b-1" || !st[0].Up || st[0].Concurrency != 16 {
		t.Fatalf("Stats = %+v", st)
	}
	if info := roster.GPUs(); len(info.Devices) != 0 || info.Reason != "workers on other hosts: 1 announced" {
		t.Fatalf("GPUs = %+v", info)
	}
}

func TestTheRosterReadsTheBucketAtMostOncePerRefresh(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir()}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Unix(1000, 0)
	roster := NewRoster(b, time.Minute)
	roster.now = func() time.Time { return now }
	if roster.Ready() == nil {
		t.Fatal("ready with nobody announced")
	}
	if _, err := b.Workers().Put(t.Context(), "w", []byte(`{"id":"w","up":true}`)); err != nil {
		t.Fatal(err)
	}
	if roster.Ready() == nil {
		t.Fatal("read the bucket again within the refresh")
	}
	now = now.Add(time.Minute)
	if err := roster.Ready(); err != nil {
		t.Fatalf("after the refresh: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A read of the workers bucket that fails (its leader lost, a new one being
// elected) does not make a gateway forget its workers, as long as an
// announcement lives: their timing mode stays known, so jobs still go where
// those workers pull (forgotten, the mode was unknown and jobs queued for
// gpu, which CPU workers never took: scripts/measure/leaderkill).
func TestTheRosterKeepsItsWorkersThroughAFailedRead(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir()}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Workers().Put(t.Context(), "w", []byte(`{"id":"w","up":true,"mode":"cpu_interpreter"}`)); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	roster := NewRoster(b, time.Second)
	roster.now = func() time.Time { return now }
	if roster.Mode() != eval.TimingCPUInterpreter || roster.Ready() != nil {
		t.Fatalf("mode %q, ready %v", roster.Mode(), roster.Ready())
	}
	b.Close() // every read fails from here on
	now = now.Add(5 * time.Second)
	if roster.Mode() != eval.TimingCPUInterpreter || roster.Ready() != nil {
		t.Fatalf("after a failed read: mode %q, ready %v; want the workers kept", roster.Mode(), roster.Ready())
	}
	now = now.Add(bus.WorkerTTL)
	if roster.Ready() == nil || roster.Mode() != "" {
		t.Fatalf("past the announcements' TTL: mode %q, ready %v; want them gone", roster.Mode(), roster.Ready())
	}
}
