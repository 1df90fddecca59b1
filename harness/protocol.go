package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// ProtocolMajor is the major version of the process protocol (docs/protocol.md).
// Go refuses a zygote whose hello carries a different major.
//
// Changelog:
//   - 1.0 (2026-11-29): first version.
//   - 1.1 (2026-11-29): eval.job.task_check (run only the reference: is the task valid?).
//   - 1.2 (2026-11-30): eval.job.check (a task check's depth and limits); a task
//     check's verdict carries task_info, and on a GPU ref_runtime.
//   - 1.3 (2026-11-30): options require_triton and cpu_timing. Inside the zygote each
//     evaluation is a judge that decides the verdict and two runners that run the
//     task's and the candidate's code (the verdict schema 1.1 says what changed).
const (
	ProtocolMajor   = 1
	ProtocolVersion = "1.4"
)

// Record types, the "type" field of every record.
const (
	TypeHello    = "hello"
	TypeStarted  = "started"
	TypeResult   = "result"
	TypeError    = "error"
	TypeEval     = "eval"
	TypeShutdown = "shutdown"
)

// maxRecordBytes bounds one record line from the zygote. A verdict carries at
// most a few KiB of text, so anything near this is a broken or hostile writer.
const maxRecordBytes = 4 << 20

// Record is one protocol record; the concrete types are *Hello, *Started,
// *Result, *ErrorRecord, *Eval and *Shutdown.
type Record interface{ recordType() string }

// Header is the part every record shares.
type Header struct {
	V    int    `json:"v"`
	Type string `json:"type"`
}

// Sandbox is what the zygote could apply to its children.
type Sandbox struct {
	Netns    bool   `json:"netns"`
	Landlock bool   `json:"landlock"`
	Rlimits  bool   `json:"rlimits"`
	Level    string `json:"level"` // "full" or "partial"
	Detail   string `json:"detail"`
}

// Hello is the zygote's first record.
type Hello struct {
	Header
	Protocol       string  `json:"protocol"`
	HarnessVersion string  `json:"harness_version"`
	PID            int     `json:"pid"`
	Python         string  `json:"python"`
	Torch          string  `json:"torch"`
	Triton         string  `json:"triton"`
	Mode           string  `json:"mode"`
	Device         string  `json:"device"`
	Sandbox        Sandbox `json:"sandbox"`
}

// Started says a child was forked for job ID; the child leads its own
// process group (pgid == PID).
type Started struct {
	Header
	ID  string `json:"id"`
	PID int    `json:"pid"`
}

// Result carries the one verdict of an accepted eval.
type Result struct {
	Header
	ID      string       `json:"id"`
	Verdict eval.Verdict `json:"verdict"`
}

// ErrorRecord says a record Go sent could not be understood.
type ErrorRecord struct {
	Header
	ID      string `json:"id,omitempty"`
	Message string `json:"message"`
}

// Eval asks the zygote to evaluate Job in a fresh child.
type Eval struct {
	Header
	ID  string   `json:"id"`
	Job eval.Job `json:"job"`
}

// Shutdown asks the zygote to kill its children and exit.
type Shutdown struct {
	Header
}

func (*Hello) recordType() string       { return TypeHello }
func (*Started) recordType() string     { return TypeStarted }
func (*Result) recordType() string      { return TypeResult }
func (*ErrorRecord) recordType() string { return TypeError }
func (*Eval) recordType() string        { return TypeEval }
func (*Shutdown) recordType() string    { return TypeShutdown }

// NewEval builds an eval record for the current protocol.
func NewEval(id string, job eval.Job) *Eval {
	return &Eval{Header: Header{V: ProtocolMajor, Type: TypeEval}, ID: id, Job: job}
}

// NewShutdown builds a shutdown record for the current protocol.
func NewShutdown() *Shutdown {
	return &Shutdown{Header: Header{V: ProtocolMajor, Type: TypeShutdown}}
}

// EncodeRecord returns r as one newline-terminated JSON line.
func EncodeRecord(r Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("harness.EncodeRecord: %w", err)
	}
	return append(b, '\n'), nil
}

// ErrUnknownType is returned for a well-formed record of a type this version
// does not know; readers log and skip it (fields and types are only added).
var ErrUnknownType = errors.New("unknown record type")

// DecodeRecord parses one line from the zygote. The input is untrusted (a
// broken zygote or, in the worst case, code that escaped its child), so it
// validates what the supervisor relies on: the major version, the type, and
// an id on records that are routed to jobs.
func DecodeRecord(line []byte) (Record, error) {
	if len(line) > maxRecordBytes {
		return nil, fmt.Errorf("harness.DecodeRecord: record of %d bytes exceeds %d", len(line), maxRecordBytes)
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("harness.DecodeRecord: %w", err)
	}
	if h.V != ProtocolMajor {
		return nil, fmt.Errorf("harness.DecodeRecord: protocol major %d, want %d", h.V, ProtocolMajor)
	}
	var r Record
	switch h.Type {
	case TypeHello:
		r = new(Hello)
	case TypeStarted:
		r = new(Started)
	case TypeResult:
		r = new(Result)
	case TypeError:
		r = new(ErrorRecord)
	case TypeEval:
		r = new(Eval)
	case TypeShutdown:
		r = new(Shutdown)
	default:
		return nil, fmt.Errorf("harness.DecodeRecord: %w %q", ErrUnknownType, h.Type)
	}
	if err := json.Unmarshal(line, r); err != nil {
		return nil, fmt.Errorf("harness.DecodeRecord: %s: %w", h.Type, err)
	}
	if err := checkRecord(r); err != nil {
		return nil, fmt.Errorf("harness.DecodeRecord: %s: %w", h.Type, err)
	}
	return r, nil
}

func checkRecord(r Record) error {
	switch r := r.(type) {
	case *Started:
		if r.ID == "" {
			return errors.New("missing id")
		}
		if r.PID <= 1 {
			// kill(-pid) with pid 0 or 1 would hit the wrong group: refuse.
			return fmt.Errorf("invalid pid %d", r.PID)
		}
	case *Result:
		if r.ID == "" {
			return errors.New("missing id")
		}
		r.Verdict.Normalize()
	case *Hello:
		if _, err := ParseMajor(r.Protocol); err != nil {
			return err
		}
	}
	return nil
}

// ParseMajor returns the major of a "MAJOR.MINOR" version string.
func ParseMajor(version string) (int, error) {
	major, _, ok := strings.Cut(version, ".")
	if !ok {
		return 0, fmt.Errorf("version %q is not MAJOR.MINOR", version)
	}
	n, err := strconv.Atoi(major)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("version %q is not MAJOR.MINOR", version)
	}
	return n, nil
}
