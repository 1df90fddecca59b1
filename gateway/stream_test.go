package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// stream opens GET /v1/batches/{id}/stream on a real server (so lines
// arrive as they are flushed) and returns the response.
func stream(t *testing.T, ctx context.Context, url, id string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+batchLocation(id)+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp
}

// lineReader reads NDJSON lines, keeping them for a check against the spec.
type lineReader struct {
	t   *testing.T
	sc  *bufio.Scanner
	raw bytes.Buffer
}

func newLineReader(t *testing.T, r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	return &lineReader{t: t, sc: sc}
}

// next returns the next line, or ok false at the end of the stream.
func (l *lineReader) next() (batchLine, bool) {
	l.t.Helper()
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			l.t.Fatalf("reading the stream: %v", err)
		}
		return batchLine{}, false
	}
	l.raw.Write(l.sc.Bytes())
	l.raw.WriteByte('\n')
	var line batchLine
	if err := json.Unmarshal(l.sc.Bytes(), &line); err != nil {
		l.t.Fatalf("line %q: %v", l.sc.Bytes(), err)
	}
	return line, true
}

// checkSpec holds every line read so far to openapi.yaml.
func (l *lineReader) checkSpec() {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/x-ndjson")
	rec.Body = bytes.NewBuffer(l.raw.Bytes())
	checkSpec(l.t, http.MethodGet, "/v1/batches/{id}/stream", rec)
}

func waitDone(t *testing.T, h http.Handler, id string, n int) {
	t.Helper()
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		b := decodeBatch(t, do(t, h, http.MethodGet, batchLocation(id), nil))
		if b.Done < n {
			return fmt.Errorf("%d done, want %d", b.Done, n)
		}
		return nil
	})
}

// Items already finished come first, in index order; the others as they
// finish; every index exactly once; the stream then ends.
func TestBatchStream(t *testing.T) {
	// No re-reads of the store while streaming: the lines already in must
	// come from the first read.
	srv, _, ev := startFake(t, Config{ResultPoll: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{"reference": ref, "reward_fn": "binary",
		"codes": []string{"ok 0", "hold 1", "wrong 2", "hold 3"}, "wait_s": 0})
	id := decodeRef(t, rec).BatchID
	waitDone(t, srv.Handler(), id, 2)

	lines := newLineReader(t, stream(t, ctx, hs.URL, id).Body)
	var got []int
	for range 2 {
		l, ok := lines.next()
		if !ok {
			t.Fatal("stream ended before the finished items")
		}
		got = append(got, l.Index)
	}
	if !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("first lines %v, want the finished 0 and 2", got)
	}
	close(ev.release)
	for l, ok := lines.next(); ok; l, ok = lines.next() {
		got = append(got, l.Index)
		if l.Result.Status != eval.StatusCorrect || l.Reward != 1 || l.Cached {
			t.Errorf("line %+v", l)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("indices %v, want each of 0..3 once", got)
	}
	lines.checkSpec()

	// Streamed again once done: every line, then the end.
	again := newLineReader(t, stream(t, ctx, hs.URL, id).Body)
	n := 0
	for _, ok := again.next(); ok; _, ok = again.next() {
		n++
	}
	if n != 4 {
		t.Errorf("a finished batch streamed %d lines, want 4", n)
	}
}

// A client that leaves ends the handler; so does shutdown.
func TestStreamEnds(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  func(srv *Server, cancel context.CancelFunc)
	}{
		{"client disconnects", func(_ *Server, cancel context.CancelFunc) { cancel() }},
		{"server shuts down", func(srv *Server, _ context.CancelFunc) { srv.stop() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, _ := startFake(t, Config{})
			returned := make(chan struct{}, 1)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				srv.Handler().ServeHTTP(w, r)
				returned <- struct{}{}
			}))
			defer hs.Close()
			rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{"reference": ref, "codes": []string{"hold"}, "wait_s": 0})
			id := decodeRef(t, rec).BatchID
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			resp := stream(t, ctx, hs.URL, id)
			tt.end(srv, cancel)
			select {
			case <-returned:
			case <-time.After(10 * time.Second):
				t.Fatal("the stream handler did not return")
			}
			if _, err := io.ReadAll(resp.Body); err != nil && !errors.Is(err, context.Canceled) {
				t.Logf("body: %v", err)
			}
		})
	}
}
