package stack

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// journal records what the components did, in order.
type journal struct {
	mu  sync.Mutex
	log []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.log = append(j.log, s)
	j.mu.Unlock()
}

func (j *journal) get() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.log)
}

// part is a component that journals its Start, Stop and the end of its Run;
// fail makes its Start fail, runErr makes its Run end on its own.
func part(j *journal, name string, fail error, runErr chan error) Component {
	return Component{
		Name: name,
		Start: func(context.Context) error {
			j.add("start " + name)
			return fail
		},
		Run: func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				j.add("run ended " + name)
				return nil
			case err := <-runErr:
				return err
			}
		},
		Stop: func(context.Context) error {
			j.add("stop " + name)
			return nil
		},
	}
}

// Components start in order and stop in reverse, each Stop before the end
// of its Run: the HTTP server drains before the workers stop, the sink
// flushes before it stops.
func TestComponentsStopInReverseOrder(t *testing.T) {
	j := &journal{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, part(j, "bus", nil, nil), part(j, "sink", nil, nil), part(j, "http", nil, nil))
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"start bus", "start sink", "start http",
		"stop http", "run ended http", "stop sink", "run ended sink", "stop bus", "run ended bus"}
	if got := j.get(); !slices.Equal(got, want) {
		t.Fatalf("journal\n%v\nwant\n%v", got, want)
	}
}

// A component whose Run fails stops the rest, and is the error.
func TestAFailedComponentStopsTheProcess(t *testing.T) {
	j := &journal{}
	fail := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), part(j, "bus", nil, nil), part(j, "sink", nil, fail), part(j, "http", nil, nil))
	}()
	time.Sleep(50 * time.Millisecond)
	fail <- errors.New("disk gone")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sink: disk gone") {
			t.Fatalf("err %v, want the sink's", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a failed component did not stop the process")
	}
	if got := j.get(); !slices.Contains(got, "stop http") || !slices.Contains(got, "stop bus") {
		t.Fatalf("journal %v: the others were not stopped", got)
	}
}

// A Start that fails stops what started before it, in reverse, and starts
// nothing after it.
func TestAFailedStartStopsWhatStarted(t *testing.T) {
	j := &journal{}
	_, err := Start(t.Context(), nil, part(j, "bus", nil, nil), part(j, "harness", nil, nil),
		part(j, "http", errors.New("port busy"), nil), part(j, "never", nil, nil))
	if err == nil || err.Error() != "port busy" {
		t.Fatalf("err %v", err)
	}
	want := []string{"start bus", "start harness", "start http", "stop harness", "run ended harness", "stop bus", "run ended bus"}
	if got := j.get(); !slices.Equal(got, want) {
		t.Fatalf("journal\n%v\nwant\n%v", got, want)
	}
}

// run is what Serve and Worker do with their components: start them, wait
// for ctx or a failure, stop them.
func run(ctx context.Context, comps ...Component) error {
	r, err := Start(ctx, nil, comps...)
	if err != nil {
		return err
	}
	return wait(ctx, r)
}
