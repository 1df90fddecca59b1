package tasks

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
)

// Origin says where a task came from.
type Origin string

const (
	OriginSuite Origin = "suite" // a file of a suite loaded at start
	OriginAPI   Origin = "api"   // registered with POST /v1/tasks
)

// Task is one reference problem (KernelBench format).
type Task struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"` // the id's last segment
	Origin    Origin    `json:"origin"`
	Source    string    `json:"source"`
	TaskHash  string    `json:"task_hash"` // eval.HashSource(Source), as verdicts carry it
	CreatedAt time.Time `json:"created_at"`
	// GPU is what a GPU check measured for a suite task (WithFigures); nil
	// for API tasks and suite tasks the manifest has no GPU run for.
	GPU *datasets.GPURun `json:"gpu,omitempty"`
}

// Harness is the task as a harness job carries it. The path is a label
// (it names the task in task_error feedback), not a file on this host: no
// server path reaches an LLM prompt.
func (t Task) Harness() eval.Task { return HarnessTask(t.ID, t.Source) }

// HarnessTask is task id with source as a harness job carries it, for a
// caller that holds the id and the source but no Task (a search): named by
// the id's last segment, as every verdict's task_name is, so a search's
// rows name the task as reward rows do (task_id is the suite id).
func HarnessTask(id, source string) eval.Task {
	return eval.Task{Name: nameOf(id), Path: "/tasks/" + id + ".py", Source: source}
}

// Prompt is the task's prompt text (see Prompt).
func (t Task) Prompt() string { return Prompt(t.Source) }

// MaxSourceBytes bounds a task's source: it travels in every job of the
// queue and in the KV bucket, whose values must stay under NATS's 1 MiB.
const MaxSourceBytes = 256 << 10

// MaxIDLen bounds an id.
const MaxIDLen = 128

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*(/[A-Za-z0-9][A-Za-z0-9_-]*)*$`)

// ValidID reports why id cannot name a task: segments of letters, digits,
// '_' and '-' (not starting with '_' or '-'), separated by '/', at most
// MaxIDLen bytes. Such an id is a valid KV key and needs no URL escaping.
func ValidID(id string) error {
	switch {
	case id == "":
		return errors.New("empty task id")
	case len(id) > MaxIDLen:
		return fmt.Errorf("task id is %d bytes; at most %d", len(id), MaxIDLen)
	case !idPattern.MatchString(id):
		return fmt.Errorf("task id %q: want segments of letters, digits, '_' and '-' separated by '/' (e.g. ci/1_add_relu)", id)
	}
	return nil
}

// DefaultID is the id of an API task registered without one, from its
// TaskHash: content addressed, so registering the same source twice names
// the same task.
func DefaultID(taskHash string) string {
	return "api/" + strings.TrimPrefix(taskHash, "sha256:")[:16]
}

// nameOf is the last segment of id.
func nameOf(id string) string {
	return id[strings.LastIndexByte(id, '/')+1:]
}

// New builds a task, filling the name and the hash. It is where a task's
// source is hashed: whoever holds the task carries TaskHash instead of
// hashing the source again. An empty id is the source's DefaultID.
func New(id, source string, origin Origin, created time.Time) Task {
	hash := eval.HashSource(source)
	if id == "" {
		id = DefaultID(hash)
	}
	return Task{
		ID: id, Name: nameOf(id), Origin: origin, Source: source,
		TaskHash: hash, CreatedAt: created.UTC(),
	}
}
