package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

// TestGoldenRoundTrip holds the Go types to the shared fixtures: every
// golden record decodes, and re-encodes to the same JSON value.
func TestGoldenRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/protocol/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden records: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r, err := DecodeRecord(bytes.TrimSpace(raw))
			if err != nil {
				t.Fatal(err)
			}
			// eval.json, eval.task_check.json: the record type is the name up to the first dot.
			if want, _, _ := strings.Cut(filepath.Base(f), "."); r.recordType() != want {
				t.Errorf("decoded as %q, want %q", r.recordType(), want)
			}
			enc, err := EncodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(enc, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\n got %s\nwant %s", enc, bytes.TrimSpace(raw))
			}
		})
	}
}

func TestGoldenEvalUsesDefaults(t *testing.T) {
	var e Eval
	mustGolden("eval.json", &e)
	if e.Job.Options != eval.DefaultOptions() {
		t.Errorf("golden options %+v differ from DefaultOptions %+v", e.Job.Options, eval.DefaultOptions())
	}
}

// The task-check golden record carries task_check; a plain eval omits it,
// so Go never sends the field to a zygote that does not need it.
func TestGoldenTaskCheck(t *testing.T) {
	var e Eval
	mustGolden("eval.task_check.json", &e)
	if !e.Job.TaskCheck || e.Job.Code != "" || e.Job.Options != eval.DefaultOptions() {
		t.Errorf("golden task check %+v", e.Job)
	}
	want := eval.CheckOptions{Depth: "auto", AutoGFLOP: 2, AutoMB: 256, MaxMB: 4096}
	if e.Job.Check == nil || *e.Job.Check != want {
		t.Errorf("golden check options %+v, want %+v", e.Job.Check, want)
	}
	plain, err := EncodeRecord(NewEval("job-1", eval.Job{Options: eval.DefaultOptions()}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "task_check") || strings.Contains(string(plain), `"check"`) {
		t.Errorf("a plain eval carries task_check: %s", plain)
	}
}

func TestDecodeRecordRejects(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"not json", `{"v":1,`, "unexpected end"},
		{"other major", `{"v":2,"type":"started","id":"a","pid":10}`, "protocol major 2"},
		{"unknown type", `{"v":1,"type":"gossip"}`, "unknown record type"},
		{"started without id", `{"v":1,"type":"started","pid":10}`, "missing id"},
		{"started pid 1", `{"v":1,"type":"started","id":"a","pid":1}`, "invalid pid"},
		{"result without id", `{"v":1,"type":"result","verdict":{}}`, "missing id"},
		{"hello bad protocol", `{"v":1,"type":"hello","protocol":"one"}`, "MAJOR.MINOR"},
		{"wrong field type", `{"v":1,"type":"started","id":"a","pid":"x"}`, "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRecord([]byte(tt.line))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestDecodeResultNormalizes(t *testing.T) {
	r, err := DecodeRecord([]byte(`{"v":1,"type":"result","id":"a","verdict":{"status":"correct","extra_future_field":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := r.(*Result).Verdict
	if v.HackFlags == nil || v.Warnings == nil || v.StageMS == nil || v.SchemaVersion != eval.SchemaVersion {
		t.Errorf("not normalized: %+v", v)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	files, _ := filepath.Glob("testdata/protocol/*.json")
	for _, name := range files {
		b, _ := os.ReadFile(name)
		f.Add(bytes.TrimSpace(b))
	}
	f.Add([]byte(`{"v":1,"type":"started","id":"x","pid":-5}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := DecodeRecord(line)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode and decode to the same type.
		enc, err := EncodeRecord(r)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		r2, err := DecodeRecord(bytes.TrimSpace(enc))
		if err != nil {
			t.Fatalf("re-decode %s: %v", enc, err)
		}
		if r2.recordType() != r.recordType() {
			t.Fatalf("type changed %q → %q", r.recordType(), r2.recordType())
		}
		if s, ok := r.(*Started); ok && s.PID <= 1 {
			t.Fatalf("accepted pid %d", s.PID)
		}
	})
}

func TestHashSource(t *testing.T) {
	if got := eval.HashSource(""); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("HashSource(\"\") = %s", got)
	}
}

func TestStatuses(t *testing.T) {
	// testdata/vocabulary.json is the Python side's list too (test_protocol.py).
	var vocab struct {
		Statuses  []eval.Status `json:"statuses"`
		HackFlags []string      `json:"hack_flags"`
	}
	raw, err := os.ReadFile("testdata/vocabulary.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vocab); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vocab.Statuses, eval.Statuses) || !slices.Equal(vocab.HackFlags, eval.HackFlags) {
		t.Errorf("statuses %v, flags %v; want %v, %v", eval.Statuses, eval.HackFlags, vocab.Statuses, vocab.HackFlags)
	}
	if !eval.StatusRewardHack.Valid() || eval.Status("passed").Valid() {
		t.Error("Status.Valid wrong")
	}
}

func TestNameTaskFailure(t *testing.T) {
	v := harnessVerdict(eval.StatusTimeout, eval.TimingCPUInterpreter, "no result within 2m30s (timeout_s plus grace)\nmore", "Timeout")
	nameTaskFailure(&v)
	if want := "the reference failed the task check (timeout): no result within 2m30s (timeout_s plus grace)"; v.TaskError != want {
		t.Errorf("task_error %q, want %q", v.TaskError, want)
	}
	ok := harnessVerdict(eval.StatusCorrect, eval.TimingCPUInterpreter, "", "")
	nameTaskFailure(&ok)
	if ok.TaskError != "" {
		t.Errorf("a valid task got task_error %q", ok.TaskError)
	}
}
