package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/reward"
)

// rewardRequest is the body of POST /v1/rewards (schema RewardRequest).
type rewardRequest struct {
	TaskID      *string         `json:"task_id"`
	Reference   *string         `json:"reference"`
	Completions []string        `json:"completions"`
	Codes       []string        `json:"codes"`
	RewardFn    string          `json:"reward_fn"`
	Options     json.RawMessage `json:"options"`
	WaitS       *float64        `json:"wait_s"`
	DeadlineS   *float64        `json:"deadline_s"` // nil: none
	Cache       *bool           `json:"cache"`      // nil: true
	// Prompts, one per item when given: what the model was asked (a string,
	// or chat messages). Logged with each evaluation; the verdict ignores it.
	Prompts []json.RawMessage `json:"prompts"`
	// FinishReasons, one per completion when given: why the model stopped
	// (a string, or null when not known); "length" marks it cut off.
	FinishReasons []json.RawMessage `json:"finish_reasons"`
}

// batchSpec is a validated request.
type batchSpec struct {
	taskID string // registry id ("" for an inline reference)
	task   eval.Task
	// taskHash is eval.HashSource(task.Source), made once where the task
	// entered (inlineTask, the registry's, an episode's) and carried to
	// every job; "" only until runBatch resolves a taskID.
	taskHash string
	items    []string // completions, or codes when fromText is false
	fromText bool
	rewardFn string
	options  eval.Options
	wait     time.Duration // 0: answer 202 at once
	// deadline (0: none) is how long after acceptance an unfinished item is
	// given up (dispatch.Job.Deadline).
	deadline time.Duration
	// bypass: the request said cache false, so every item runs (no answer
	// from the result cache, none shared). False, the zero value, for every
	// path that has no such field (OpenRLHF, episodes).
	bypass bool
	// prompts, nil or one per item: logged with each item's evaluation.
	prompts [][]event.PromptMessage
	// finishReasons, nil or one per completion: why the model stopped
	// ("" when not known; submission.Word reads "length").
	finishReasons []string
}

// maxDrainBytes bounds how much of an oversized body readBody discards so the
// client can read its 413.
const maxDrainBytes = 128 << 20

// readBody reads at most limit bytes of r's body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	orig := r.Body
	body, err := io.ReadAll(http.MaxBytesReader(w, orig, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			// A client still sending (urllib, requests: no Expect: 100-continue)
			// would get a connection reset instead of the 413 if the server closed
			// with its body unread; within a bound, read the rest and drop it.
			_, _ = io.CopyN(io.Discard, orig, maxDrainBytes)
			return nil, newError(CodeBodyTooLarge, "", "request body exceeds %d bytes", limit)
		}
		return nil, newError(CodeBadJSON, "", "reading the body: %v", err)
	}
	return body, nil
}

// decodeBody decodes body strictly into v; bad_json names the field at fault.
func decodeBody(body []byte, v any) *apiError {
	if err := decodeStrict(body, v); err != nil {
		return newError(CodeBadJSON, jsonField(err), "malformed JSON: %v", err)
	}
	return nil
}

// readJSON reads the request's body within the size limit and decodes it
// strictly into v: for the handlers that need only the decoded request.
func (s *Server) readJSON(c *gin.Context, v any) *apiError {
	body, aerr := readBody(c.Writer, c.Request, s.cfg.MaxBodyBytes)
	if aerr != nil {
		return aerr
	}
	return decodeBody(body, v)
}

// parseRewardRequest decodes and validates body.
func parseRewardRequest(body []byte, cfg Config) (batchSpec, *apiError) {
	var req rewardRequest
	if aerr := decodeBody(body, &req); aerr != nil {
		return batchSpec{}, aerr
	}
	return validateRewardRequest(req, cfg)
}

// validateRewardRequest turns a decoded request into a batch spec.
func validateRewardRequest(req rewardRequest, cfg Config) (batchSpec, *apiError) {
	var spec batchSpec
	switch {
	case req.TaskID != nil && req.Reference != nil:
		return spec, newError(CodeInvalidRequest, "task_id", "give task_id or reference, not both")
	case req.TaskID != nil && *req.TaskID == "":
		return spec, newError(CodeInvalidRequest, "task_id", "task_id is empty: give a registered task id (GET /v1/tasks) or reference")
	case req.TaskID != nil:
		spec.taskID = *req.TaskID // the handler resolves it (taskByID)
	case req.Reference == nil || trimSpec(*req.Reference) == "":
		return spec, newError(CodeInvalidRequest, "reference", "a task is required: give reference (KernelBench-format source) or task_id")
	default:
		spec.task, spec.taskHash = inlineTask(*req.Reference)
	}

	switch {
	case req.Completions != nil && req.Codes != nil:
		return spec, newError(CodeInvalidRequest, "completions", "give completions or codes, not both")
	case req.Completions != nil:
		spec.items, spec.fromText = req.Completions, true
	case req.Codes != nil:
		spec.items = req.Codes
	}
	field := "codes"
	if spec.fromText {
		field = "completions"
	}
	switch n := len(spec.items); {
	case n == 0:
		return spec, newError(CodeInvalidRequest, field, "at least one completion or code is required")
	case n > cfg.MaxItems:
		return spec, newError(CodeTooManyItems, field, "%d items in one request; at most %d", n, cfg.MaxItems)
	}

	var aerr *apiError
	if spec.rewardFn, aerr = parseRewardFn(req.RewardFn); aerr != nil {
		return spec, aerr
	}
	if spec.options, aerr = cfg.parseOptions(req.Options); aerr != nil {
		return spec, aerr
	}

	spec.wait = cfg.DefaultWait
	if req.WaitS != nil {
		if *req.WaitS < 0 || *req.WaitS > maxWaitS {
			return spec, newError(CodeInvalidRequest, "wait_s", "wait_s must be in 0..%d, got %v", maxWaitS, *req.WaitS)
		}
		spec.wait = time.Duration(*req.WaitS * float64(time.Second))
	}
	if req.DeadlineS != nil {
		if !(*req.DeadlineS > 0 && *req.DeadlineS <= maxWaitS) {
			return spec, newError(CodeInvalidRequest, "deadline_s", "deadline_s must be in (0, %d] seconds, got %v", maxWaitS, *req.DeadlineS)
		}
		spec.deadline = time.Duration(*req.DeadlineS * float64(time.Second))
	}
	spec.bypass = req.Cache != nil && !*req.Cache
	if req.Prompts != nil {
		if len(req.Prompts) != len(spec.items) {
			return spec, newError(CodeInvalidRequest, "prompts", "%d prompts for %d %s; give one per item or none", len(req.Prompts), len(spec.items), field)
		}
		for i, raw := range req.Prompts {
			p, err := parsePrompt(raw)
			if err != nil {
				return spec, newError(CodeInvalidRequest, fmt.Sprintf("prompts[%d]", i), "%v", err)
			}
			spec.prompts = append(spec.prompts, p)
		}
	}
	if req.FinishReasons != nil {
		if !spec.fromText {
			return spec, newError(CodeInvalidRequest, "finish_reasons", "finish_reasons go with completions: codes were not written by a model here")
		}
		if len(req.FinishReasons) != len(spec.items) {
			return spec, newError(CodeInvalidRequest, "finish_reasons", "%d finish_reasons for %d completions; give one per completion or none", len(req.FinishReasons), len(spec.items))
		}
		for i, raw := range req.FinishReasons {
			r, aerr := parseFinishReason(raw, fmt.Sprintf("finish_reasons[%d]", i))
			if aerr != nil {
				return spec, aerr
			}
			spec.finishReasons = append(spec.finishReasons, r)
		}
	}
	if req.Reference != nil {
		if aerr := oneLineReference(*req.Reference); aerr != nil {
			return spec, aerr
		}
	}
	return spec, nil
}

// maxFinishReason bounds a finish reason: the known ones are a word.
const maxFinishReason = 64

// parseFinishReason reads one finish reason: a string (any: "length" is the
// one that means cut off; the others add nothing), or null for not known.
func parseFinishReason(raw json.RawMessage, field string) (string, *apiError) {
	if string(raw) == "null" {
		return "", nil
	}
	var r string
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", newError(CodeInvalidRequest, field, "%s is %.40s: a finish reason is a string such as \"stop\" or \"length\" (the one that marks a completion cut off), or null", field, raw)
	}
	if n := utf8.RuneCountInString(r); n > maxFinishReason {
		// Characters, as openapi.yaml's maxLength counts them.
		return "", newError(CodeInvalidRequest, field, "%s is %d characters; a finish reason is a word such as \"stop\" or \"length\" (at most %d characters)", field, n, maxFinishReason)
	}
	return r, nil
}

// promptRoles are the chat roles a prompt message may have.
var promptRoles = []string{"system", "user", "assistant", "tool", "developer"}

// parsePrompt reads one prompt: a string (one user message) or a list of
// {role, content} messages.
func parsePrompt(raw json.RawMessage) ([]event.PromptMessage, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return []event.PromptMessage{{Role: "user", Content: text}}, nil
	}
	// Content is a pointer so that a message without one is refused, not
	// read as empty (openapi.yaml requires it).
	var in []struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
	}
	if err := decodeStrict(raw, &in); err != nil || len(in) == 0 {
		return nil, errors.New("a prompt is a string or a non-empty list of {role, content} messages")
	}
	msgs := make([]event.PromptMessage, len(in))
	for i, m := range in {
		if !slices.Contains(promptRoles, m.Role) {
			return nil, fmt.Errorf("message role %q: want one of %s", m.Role, strings.Join(promptRoles, ", "))
		}
		if m.Content == nil {
			return nil, fmt.Errorf("message %d has no content", i)
		}
		msgs[i] = event.PromptMessage{Role: m.Role, Content: *m.Content}
	}
	return msgs, nil
}

// finishReasonOf is item i's finish reason, "" when the request gave none.
func (s batchSpec) finishReasonOf(i int) string {
	if i < len(s.finishReasons) {
		return s.finishReasons[i]
	}
	return ""
}

// promptOf is item i's prompt, nil when the request gave none.
func (s batchSpec) promptOf(i int) []event.PromptMessage {
	if i < len(s.prompts) {
		return s.prompts[i]
	}
	return nil
}

// oneLineReference refuses a reference of one line: a task's source defines
// class Model, get_inputs and get_init_inputs, so it has several; one line is
// a task id sent in the wrong field, or a placeholder. (The harness checks the
// rest before the candidate: a broken reference is a task error, never the
// candidate's.)
func oneLineReference(source string) *apiError {
	s := trimSpec(source)
	if strings.Contains(s, "\n") {
		return nil
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return newError(CodeInvalidRequest, "reference", "reference %q is one line, not a task's source (class Model, get_inputs, get_init_inputs); to name a registered task send task_id (GET /v1/tasks lists them)", s)
}

// inlineTask is a task given by its source in the request, and the
// source's hash: made here, where the reference enters, and carried from
// here (to the registry lookup, the batch record, every job).
func inlineTask(source string) (eval.Task, string) {
	return eval.Task{Name: "inline", Path: "/inline/reference.py", Source: source}, eval.HashSource(source)
}

// parseRewardFn checks a reward_fn field ("" means the default).
func parseRewardFn(name string) (string, *apiError) {
	if _, err := reward.Lookup(name); err != nil {
		return "", newError(CodeUnknownRewardFn, "reward_fn", "unknown reward_fn %q; valid: %s", name, strings.Join(reward.Names(), ", "))
	}
	if name == "" {
		return reward.Default, nil
	}
	return name, nil
}

// maxWaitS bounds wait_s (an hour: longer belongs to the batch API).
const maxWaitS = 3600

// decodeStrict decodes one JSON value, refusing unknown fields, trailing
// data and a key given twice in one object (strict.go).
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return checkDuplicateKeys(data)
}

// jsonField names the field a decode error is about, when it says.
func jsonField(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return te.Field
	}
	if de, ok := errors.AsType[*duplicateKeyError](err); ok {
		return de.path
	}
	if _, name, ok := strings.Cut(err.Error(), "json: unknown field "); ok {
		return strings.Trim(name, `"`)
	}
	return ""
}

func dotted(name string) string {
	if name == "" {
		return ""
	}
	return "." + name
}

// optionsError turns eval.Options.Validate's error into a message and the
// first offending field (each message starts with the wire name).
func optionsError(err error) (msg, field string) {
	msg = strings.TrimPrefix(err.Error(), "eval.Options: ")
	msg = strings.ReplaceAll(msg, "\n", "; ")
	field, _, _ = strings.Cut(msg, " ")
	return msg, field
}
