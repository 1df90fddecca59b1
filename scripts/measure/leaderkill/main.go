// Command leaderkill measures how a job queue on a three-node NATS cluster
// survives losing the node that leads the JOBS stream (or the workers'
// consumer): two workers pull the queues a CPU worker pulls
// (dispatch.Queues), three jobs are delivered, the leader is killed with
// SIGKILL, three more jobs are queued, and the run stalls when they are not
// all delivered within -wait. On a stall it prints JOBS's and the consumers'
// state, then again after as long again. The e2e test kills a node that
// leads neither, so it cannot show this fault: the leader must go.
//
//	go build -o /tmp/natsnode ./tests/natsnode
//	go run ./scripts/measure/leaderkill -natsnode /tmp/natsnode -victim stream -runs 40
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

func freePort() int {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type node struct {
	cmd  *exec.Cmd
	http int
}

func cluster(bin string) ([]*node, string) {
	dir := tempDir()
	type pp struct{ c, r, h int }
	ports := []pp{{freePort(), freePort(), freePort()}, {freePort(), freePort(), freePort()}, {freePort(), freePort(), freePort()}}
	var nodes []*node
	var urls []string
	for i, p := range ports {
		var routes []string
		for j, q := range ports {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", q.r))
			}
		}
		cmd := exec.Command(bin, "-name", fmt.Sprintf("n%d", i), "-port", fmt.Sprint(p.c), "-cluster", fmt.Sprint(p.r),
			"-http", fmt.Sprint(p.h), "-routes", strings.Join(routes, ","), "-store", filepath.Join(dir, fmt.Sprint(i)))
		f, _ := os.Create(filepath.Join(os.TempDir(), fmt.Sprintf("stall-n%d.log", i)))
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			fatal(err)
		}
		nodes = append(nodes, &node{cmd, p.h})
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", p.c))
	}
	cleanups = append(cleanups, func() {
		for _, n := range nodes {
			_ = n.cmd.Process.Kill()
			_, _ = n.cmd.Process.Wait()
		}
	})
	for _, n := range nodes {
		deadline := time.Now().Add(60 * time.Second)
		for {
			r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", n.http))
			if err == nil && r.StatusCode == 200 {
				r.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				fatal("unhealthy")
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nodes, strings.Join(urls, ",")
}

func leaderOf(nodes []*node, consumer string) int {
	for range 100 {
		for _, n := range nodes {
			if n.cmd.ProcessState != nil {
				continue
			}
			r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/jsz?streams=true&consumers=true", n.http))
			if err != nil {
				continue
			}
			var jsz struct {
				AccountDetails []struct {
					StreamDetail []struct {
						Name           string
						Cluster        struct{ Leader string }
						ConsumerDetail []struct {
							Name    string
							Cluster struct{ Leader string }
						} `json:"consumer_detail"`
					} `json:"stream_detail"`
				} `json:"account_details"`
			}
			_ = json.NewDecoder(r.Body).Decode(&jsz)
			r.Body.Close()
			for _, a := range jsz.AccountDetails {
				for _, s := range a.StreamDetail {
					if consumer == "JOBS" && s.Name == "JOBS" && s.Cluster.Leader != "" {
						var i int
						fmt.Sscanf(s.Cluster.Leader, "n%d", &i)
						return i
					}
					for _, c := range s.ConsumerDetail {
						if c.Name == consumer && c.Cluster.Leader != "" {
							var i int
							fmt.Sscanf(c.Cluster.Leader, "n%d", &i)
							return i
						}
					}
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	fatal("no leader")
	return -1
}

func once() (stalled bool) {
	nodes, urls := cluster(*natsnode)
	ctx, cancel := context.WithCancel(context.Background())
	gw, err := bus.Open(ctx, bus.Options{URL: urls, JobAckWait: 3 * time.Second, NakDelay: 200 * time.Millisecond}, nil)
	if err != nil {
		fatal(err)
	}
	defer gw.Close()
	var mu sync.Mutex
	got := map[string]bool{}
	for range 2 {
		wb, err := bus.Open(ctx, bus.Options{URL: urls, JobAckWait: 3 * time.Second, NakDelay: 200 * time.Millisecond, Join: true}, nil)
		if err != nil {
			fatal(err)
		}
		defer wb.Close()
		go func() {
			_ = wb.PrioritizedJobs(ctx, dispatch.Queues(eval.TimingCPUInterpreter, []dispatch.Env{{Torch: "2.11.0", Triton: "3.6.0", HarnessVersion: "0.2.0"}}), 1,
				func(ctx context.Context, j bus.Delivery) error {
					time.Sleep(50 * time.Millisecond)
					mu.Lock()
					got[j.ID] = true
					mu.Unlock()
					return nil
				})
		}()
	}
	defer cancel() // deferred last: the workers stop pulling before their connections close
	publish := func(tag string, n int) []string {
		var ids []string
		for i := range n {
			id := fmt.Sprintf("%s-%d", tag, i)
			if err := gw.PublishJob(ctx, "jobs.eval.cpu", id, []byte("x")); err != nil {
				fatalf("publish %s: %v", id, err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	wait := func(ids []string, d time.Duration) bool {
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			mu.Lock()
			all := true
			for _, id := range ids {
				all = all && got[id]
			}
			mu.Unlock()
			if all {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	if !wait(publish("before", 3), 30*time.Second) {
		fatal("before: not all delivered")
	}
	who := "eval-workers-cpu"
	if *victim == "stream" {
		who = "JOBS"
	}
	victim := leaderOf(nodes, who)
	logf("killing n%d", victim)
	_ = nodes[victim].cmd.Process.Signal(syscall.SIGKILL)
	_, _ = nodes[victim].cmd.Process.Wait()
	ids := publishRetry(gw, "after", 3)
	if !wait(ids, *waitFor) {
		d, _ := gw.QueueDepth(ctx)
		dump(urls)
		mu.Lock()
		logf("got %v", got)
		mu.Unlock()
		time.Sleep(*waitFor)
		dump(urls)
		logf("after: stalled; depth %d", d)
		return true
	}
	return false
}

func publishRetry(gw *bus.Bus, tag string, n int) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%d", tag, i)
		var err error
		for range 30 {
			if err = gw.PublishJob(context.Background(), "jobs.eval.cpu", id, []byte("x")); err == nil {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			fatalf("publish %s: %v", id, err)
		}
		ids = append(ids, id)
	}
	return ids
}

func dump(urls string) {
	nc, err := nats.Connect(urls)
	if err != nil {
		logln(err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "JOBS")
	if err != nil {
		logln("stream:", err)
		return
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		logln("stream info:", err)
		return
	}
	logf("JOBS: msgs %d first %d last %d leader %s subjects %v", info.State.Msgs, info.State.FirstSeq, info.State.LastSeq, info.Cluster.Leader, info.State.Subjects)
	for name := range st.ConsumerNames(ctx).Name() {
		c, err := st.Consumer(ctx, name)
		if err != nil {
			logln(name, err)
			continue
		}
		ci, err := c.Info(ctx)
		if err != nil {
			logln(name, err)
			continue
		}
		if ci.Config.FilterSubject == "jobs.eval.cpu" || ci.NumPending > 0 || ci.NumAckPending > 0 {
			logf("%s filter %s: pending %d ackpending %d waiting %d delivered %d/%d ackfloor %d/%d leader %s",
				name, ci.Config.FilterSubject, ci.NumPending, ci.NumAckPending, ci.NumWaiting,
				ci.Delivered.Consumer, ci.Delivered.Stream, ci.AckFloor.Consumer, ci.AckFloor.Stream, ci.Cluster.Leader)
		}
	}
}

var (
	natsnode = flag.String("natsnode", "", "the tests/natsnode binary")
	victim   = flag.String("victim", "stream", "kill the leader of: stream (JOBS) or consumer (eval-workers-cpu)")
	runs     = flag.Int("runs", 20, "runs")
	waitFor  = flag.Duration("wait", 30*time.Second, "how long the jobs after the kill may take")
	cleanups []func()
)

func main() {
	flag.Parse()
	if *natsnode == "" {
		log.Fatal("-natsnode is required")
	}
	stalls := 0
	for i := range *runs {
		stalled, err := run()
		switch {
		case err != nil:
			logf("run %d: setup failed, not counted: %v", i, err)
		case stalled:
			stalls++
			logf("run %d: STALLED", i)
		default:
			logf("run %d: ok", i)
		}
	}
	fmt.Printf("%d stalls in %d runs (victim: leader of %s)\n", stalls, *runs, *victim)
}

// run is one run; a setup failure (a cluster that did not form) is its error.
func run() (stalled bool, err error) {
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
		cleanups = nil
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return once(), nil
}

func fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func fatal(a ...any)                 { panic(fmt.Sprint(a...)) }
func logf(format string, a ...any)   { log.Printf(format, a...) }
func logln(a ...any)                 { log.Println(a...) }

func tempDir() string {
	d, err := os.MkdirTemp("", "leaderkill")
	if err != nil {
		fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(d) })
	return d
}
