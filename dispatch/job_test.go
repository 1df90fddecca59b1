package dispatch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// Jobs as the version before Job embedded eval.Job wrote them to the queue
// (an evaluation of a completion, and a task check), byte for byte.
const (
	queuedEvaluation = "{\"id\":\"b_1-00000\",\"batch_id\":\"b_1\",\"index\":0,\"task\":{\"name\":\"1_add\",\"path\":\"/tasks/ci/1_add.py\",\"source\":\"import torch\\n\"},\"code\":\"import triton\",\"completion\":\"```python\\nimport triton\\n```\",\"finish_reason\":\"stop\",\"prompt\":[{\"role\":\"user\",\"content\":\"write\"}],\"options\":{\"seeds\":5,\"seed\":0,\"atol\":null,\"rtol\":null,\"timing\":true,\"timing_budget_ms\":50,\"min_iters\":5,\"max_iters\":500,\"timeout_s\":120,\"memory_limit_mb\":32768,\"output_limit_bytes\":1048576,\"copy_weights\":false,\"max_code_bytes\":262144,\"gpu_memory_fraction\":0.25},\"reward_fn\":\"adaexplore\",\"enqueued_at\":\"2026-12-06T10:00:00Z\",\"request_id\":\"r1\",\"client_id\":\"k1\",\"task_id\":\"ci/1_add\",\"deadline\":\"2026-12-06T10:01:00Z\",\"share\":true,\"lead\":true}"
	queuedTaskCheck  = "{\"id\":\"tc_1-00000\",\"batch_id\":\"tc_1\",\"index\":0,\"task\":{\"name\":\"1_add\",\"path\":\"/tasks/ci/1_add.py\",\"source\":\"import torch\\n\"},\"code\":\"\",\"options\":{\"seeds\":5,\"seed\":0,\"atol\":null,\"rtol\":null,\"timing\":true,\"timing_budget_ms\":50,\"min_iters\":5,\"max_iters\":500,\"timeout_s\":120,\"memory_limit_mb\":32768,\"output_limit_bytes\":1048576,\"copy_weights\":false,\"max_code_bytes\":262144,\"gpu_memory_fraction\":0.25},\"enqueued_at\":\"2026-12-06T10:00:00Z\",\"task_check\":true}"
)

// A job queued by the previous version decodes to the job it was, its
// hashes made on the way, so a worker upgraded while jobs wait in the queue
// runs them as queued; and a job encodes under the same names with the same
// values, plus its hashes, so a worker not yet upgraded (which ignores
// fields it does not know) reads what an upgraded gateway queues.
func TestJobOfThePreviousVersion(t *testing.T) {
	completion := "```python\nimport triton\n```"
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	task := eval.Task{Name: "1_add", Path: "/tasks/ci/1_add.py", Source: "import torch\n"}
	tests := []struct {
		name, queued string
		want         Job
	}{
		{"evaluation", queuedEvaluation, Job{
			ID: "b_1-00000", BatchID: "b_1", Job: eval.Job{Task: task, Code: "import triton", Options: eval.DefaultOptions()},
			Completion: &completion, FinishReason: "stop", Prompt: []event.PromptMessage{{Role: "user", Content: "write"}},
			RewardFn: "adaexplore", EnqueuedAt: at, RequestID: "r1", ClientID: "k1", TaskID: "ci/1_add",
			Deadline: at.Add(time.Minute), Share: true, Lead: true,
		}},
		{"task check", queuedTaskCheck, Job{
			ID: "tc_1-00000", BatchID: "tc_1", Job: eval.Job{Task: task, Options: eval.DefaultOptions(), TaskCheck: true}, EnqueuedAt: at,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Job
			if err := json.Unmarshal([]byte(tt.queued), &got); err != nil {
				t.Fatal(err)
			}
			tt.want.Hash()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded\n %+v\nwant\n %+v", got, tt.want)
			}
			data, err := json.Marshal(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			var now, before map[string]any
			if err := json.Unmarshal(data, &now); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.queued), &before); err != nil {
				t.Fatal(err)
			}
			before["task_hash"], before["code_hash"] = eval.HashSource(tt.want.Task.Source), eval.HashSource(tt.want.Code)
			if !reflect.DeepEqual(now, before) {
				t.Errorf("encoded\n %s\nthe previous version wrote, without the hashes,\n %s", data, tt.queued)
			}
		})
	}
}

// A queued job's hashes are the ones it was queued with: the worker and
// the verdict use them and do not hash the sources again.
func TestJobCarriesItsHashes(t *testing.T) {
	job := Job{ID: "b-00000", BatchID: "b", Job: eval.Job{Task: eval.Task{Source: "src"}, Code: "code",
		TaskHash: "sha256:made-at-submit", CodeHash: "sha256:also"}}
	data, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	var got Job
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.TaskHash != "sha256:made-at-submit" || got.CodeHash != "sha256:also" {
		t.Errorf("decoded hashes %q, %q from %s", got.TaskHash, got.CodeHash, data)
	}
	// The harness protocol, which encodes eval.Job, does not carry them.
	inner, err := json.Marshal(got.Job)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(inner), "hash") {
		t.Errorf("eval.Job encodes its hashes: %s", inner)
	}
}
