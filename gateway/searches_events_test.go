package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/rollout/runner"
)

// sseFrame is one event of a stream (or a comment-only block).
type sseFrame struct {
	id, event, data string
	comments        []string
}

// sseStream reads a live event stream from a real HTTP server.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// openEvents starts GET path on srv with the given headers and checks the
// answer's status and content type against openapi.yaml.
func openEvents(t *testing.T, srv *httptest.Server, path string, header map[string]string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	op := loadSpec(t).Paths.Find("/v1/searches/{id}/events").Get
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if r := op.Responses.Status(resp.StatusCode); r == nil || r.Value.Content.Get(ct) == nil {
		t.Fatalf("%d %s is not declared in openapi.yaml", resp.StatusCode, ct)
	}
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	return &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
}

// next reads one frame: lines up to a blank one.
func (s *sseStream) next() (sseFrame, error) {
	var f sseFrame
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && f.event == "" && f.comments == nil {
				return f, io.EOF
			}
			return f, fmt.Errorf("a frame cut short (%q): %w", line, err)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return f, nil
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "":
			f.comments = append(f.comments, value)
		case "id":
			f.id = value
		case "event":
			f.event = value
		case "data":
			if f.data != "" {
				s.t.Errorf("more than one data line: %q", line)
			}
			f.data = value
		default:
			s.t.Errorf("unknown field in %q", line)
		}
	}
}

// event reads the next frame that is not a heartbeat and checks its data
// against the schema its event type names.
func (s *sseStream) event(want string) sseFrame {
	s.t.Helper()
	for {
		f, err := s.next()
		if err != nil {
			s.t.Fatalf("waiting for %s: %v", want, err)
		}
		if f.event == "" {
			continue
		}
		if f.event != want {
			s.t.Fatalf("event %q, want %q (%+v)", f.event, want, f)
		}
		schema := map[string]string{"step": "SearchEvent", "end": "SearchStatus"}[f.event]
		var v any
		if err := json.Unmarshal([]byte(f.data), &v); err != nil {
			s.t.Fatalf("%s data: %v: %s", f.event, err, f.data)
		}
		if err := loadSpec(s.t).Components.Schemas[schema].Value.VisitJSON(v); err != nil {
			s.t.Errorf("%s data does not match %s: %v\n%s", f.event, schema, err, f.data)
		}
		return f
	}
}

// step reads a step event and decodes it.
func (s *sseStream) step() runner.Event {
	s.t.Helper()
	f := s.event("step")
	var ev runner.Event
	if err := json.Unmarshal([]byte(f.data), &ev); err != nil {
		s.t.Fatal(err)
	}
	if f.id != fmt.Sprint(ev.Seq) {
		s.t.Errorf("id %q for seq %d", f.id, ev.Seq)
	}
	return ev
}

func (s *sseStream) wantEOF() {
	s.t.Helper()
	if f, err := s.next(); !errors.Is(err, io.EOF) {
		s.t.Errorf("after the end: %+v, %v", f, err)
	}
}

func startSearchForTest(t *testing.T, f *fakeSearches) string {
	t.Helper()
	st, err := f.Start(t.Context(), runner.Request{TaskID: "ci/1_add_relu", Steps: 4})
	if err != nil {
		t.Fatal(err)
	}
	return st.SearchID
}

func TestSearchEventsStream(t *testing.T) {
	h, f := searchServer(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	id := startSearchForTest(t, f)
	f.step(id, goodStep(1))
	f.step(id, failedStep())

	s := openEvents(t, srv, "/v1/searches/"+id+"/events", nil)
	if ev := s.step(); ev.Seq != 1 || ev.Node != 1 || ev.SearchID != id || ev.Verdict == nil || ev.Prompt[0].Content != "write\na kernel" {
		t.Errorf("first step %+v", ev)
	}
	if ev := s.step(); ev.Seq != 2 || ev.Node != 0 || ev.Error != "no code in the answer" || ev.Verdict != nil {
		t.Errorf("second step %+v", ev)
	}
	f.step(id, goodStep(2)) // live, after the replay
	if ev := s.step(); ev.Seq != 3 || ev.Node != 2 {
		t.Errorf("live step %+v", ev)
	}
	f.end(id, runner.StateDone)
	var st runner.Status
	if err := json.Unmarshal([]byte(s.event("end").data), &st); err != nil || st.State != runner.StateDone || st.Steps != 3 {
		t.Errorf("end %+v, %v", st, err)
	}
	s.wantEOF()

	// An ended search replays its steps, then ends at once.
	s = openEvents(t, srv, "/v1/searches/"+id+"/events", nil)
	for want := 1; want <= 3; want++ {
		if ev := s.step(); ev.Seq != want {
			t.Errorf("replay: seq %d, want %d", ev.Seq, want)
		}
	}
	s.event("end")
	s.wantEOF()
}

func TestSearchEventsResume(t *testing.T) {
	h, f := searchServer(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	id := startSearchForTest(t, f)
	for n := 1; n <= 4; n++ {
		f.step(id, goodStep(n))
	}
	f.end(id, runner.StateBudget)
	for _, c := range []struct {
		name   string
		query  string
		header map[string]string
		first  int // 0: no step, the end at once
	}{
		{"Last-Event-ID", "", map[string]string{"Last-Event-ID": "2"}, 3},
		{"after", "?after=1", nil, 2},
		{"the header wins", "?after=1", map[string]string{"Last-Event-ID": "3"}, 4},
		{"after the last step", "?after=4", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openEvents(t, srv, "/v1/searches/"+id+"/events"+c.query, c.header)
			for want := c.first; want > 0 && want <= 4; want++ {
				if ev := s.step(); ev.Seq != want {
					t.Fatalf("seq %d, want %d", ev.Seq, want)
				}
			}
			s.event("end")
			s.wantEOF()
		})
	}
}

// A client that goes away ends the handler and its subscription.
func TestSearchEventsClientGone(t *testing.T) {
	h, f := searchServer(t)
	returned := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/events") {
			returned <- struct{}{}
		}
	}))
	t.Cleanup(srv.Close)
	id := startSearchForTest(t, f)
	f.step(id, goodStep(1))
	s := openEvents(t, srv, "/v1/searches/"+id+"/events", nil)
	s.step()
	if n := f.subscriptions(); n != 1 {
		t.Fatalf("%d subscriptions while streaming", n)
	}
	s.cancel()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler is still running after the client left")
	}
	kgtest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := f.subscriptions(); n != 0 {
			return fmt.Errorf("%d subscriptions left", n)
		}
		return nil
	})
}

// An idle stream gets heartbeat comments.
func TestSearchEventsHeartbeat(t *testing.T) {
	old := sseHeartbeat
	sseHeartbeat = 20 * time.Millisecond
	t.Cleanup(func() { sseHeartbeat = old })
	h, f := searchServer(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	id := startSearchForTest(t, f)
	s := openEvents(t, srv, "/v1/searches/"+id+"/events", nil)
	for range 2 {
		fr, err := s.next()
		if err != nil || fr.event != "" || len(fr.comments) != 1 || fr.comments[0] != "heartbeat" {
			t.Fatalf("frame %+v, %v; want a heartbeat", fr, err)
		}
	}
	f.step(id, goodStep(1)) // events still come between heartbeats
	if ev := s.step(); ev.Seq != 1 {
		t.Errorf("seq %d", ev.Seq)
	}
}
