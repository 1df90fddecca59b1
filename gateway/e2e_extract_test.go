package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/reward"
)

// indentLines puts every non-blank line of s under prefix, as a model
// writes a block inside a list item.
func indentLines(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}

// The fence forms models write every day read as the kernel they hold: an
// honest kernel is correct, its code byte for byte the file's.
func TestEndToEndEverydayFences(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	h := startStack(t, t.TempDir())
	honest := readFile(t, "datasets/solutions/ci/1_add_relu.py")
	forms := []string{
		"Here is the fused kernel: ```python\n" + honest + "```\n",
		"```python\n" + honest + "``` Hope this helps! It fuses the add and the ReLU.\n",
		"1. Write the kernel:\n\n" + indentLines("```python\n"+honest+"```", "    ") + "\n2. Benchmark it.\n",
	}
	var resp batchResponse
	rec := call(t, h, http.MethodPost, "/v1/rewards", "/v1/rewards", map[string]any{
		"task_id": "ci/1_add_relu", "completions": forms, "reward_fn": "binary",
		"options": map[string]any{"seeds": 2, "timing": false},
	}, &resp)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	want := eval.HashSource(strings.TrimRight(honest, "\n"))
	for i, v := range resp.Results {
		if v.Status != eval.StatusCorrect || *resp.Rewards[i] != 1 || v.CodeHash != want {
			t.Errorf("form %d: %s, reward %v, code_hash %s (want the file's %s): %.300s", i, v.Status, *resp.Rewards[i], v.CodeHash, want, v.Feedback)
		}
	}
}

// truncatedCase is a completion cut off by the token limit, or its yardstick.
type truncatedCase struct {
	name, completion, finish string
	truncated                bool
}

// A completion cut off by the token limit is invalid_submission, truncated,
// and scores what a compile error scores under every reward function, never
// as a hack (cut inside forward, the harness alone says reward_hack, decoy);
// the API, the stream, the log and an episode step say so alike, while the
// same code in a closed fence keeps the harness's own verdict.
func TestEndToEndTruncatedNeverAHack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	dataDir := t.TempDir()
	h := startStack(t, dataDir)
	honest := readFile(t, "datasets/solutions/ci/1_add_relu.py")
	cut := func(at string) string {
		t.Helper()
		i := strings.Index(honest, at)
		if i < 0 {
			t.Fatalf("%q not in the kernel", at)
		}
		return honest[:i]
	}
	inForward := cut("        n = x.numel()") // forward returns None
	broken := strings.Replace(honest, "def forward(self, x, y):", "def forward(self, x, y)", 1)
	cases := []truncatedCase{
		{"fence never closes, cut inside forward", "Here is the kernel:\n```python\n" + inForward, "", true},
		{"plain code cut inside forward, finish_reason length", inForward, "length", true},
		{"plain code cut inside a call", cut("x, y, out, n, BLOCK=BLOCK)"), "", true},
		{"only a <think> that never ends", "<think>\nThe kernel must fuse the add and the ReLU. First, the mask", "", true},
		{"compile error (the yardstick)", "```python\n" + broken + "```", "", false},
		{"a whole kernel whose fence never closes", "Here:\n```python\n" + honest, "", false},
	}
	const yardstick, whole = 4, 5
	completions, finishes := make([]string, len(cases)), make([]any, len(cases))
	for i, c := range cases {
		completions[i] = c.completion
		if c.finish != "" {
			finishes[i] = c.finish
		}
	}
	fast := map[string]any{"seeds": 2, "timing": false}
	var batches []string
	for _, fn := range reward.Names() {
		t.Run(fn, func(t *testing.T) {
			var resp batchResponse
			rec := call(t, h, http.MethodPost, "/v1/rewards", "/v1/rewards", map[string]any{
				"task_id": "ci/1_add_relu", "completions": completions, "finish_reasons": finishes,
				"reward_fn": fn, "options": fast,
			}, &resp)
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			batches = append(batches, resp.BatchID)
			if v := resp.Results[yardstick]; v.Status != eval.StatusCompileError {
				t.Fatalf("yardstick: %s: %.300s", v.Status, v.Feedback)
			}
			if v := resp.Results[whole]; v.Status != eval.StatusCorrect {
				t.Errorf("a whole kernel in an open fence: %s: %.300s", v.Status, v.Feedback)
			}
			for i, c := range cases {
				if c.truncated {
					checkTruncated(t, c, resp, i, yardstick)
				}
			}
			if w := resp.Results[0].Warnings; !strings.Contains(strings.Join(w, "\n"), "reward_hack (decoy)") {
				t.Errorf("cut inside forward: warnings %q do not say what the harness reported", w)
			}
		})
	}

	// The same cut code, fenced and closed: the harness's own verdict, from
	// the cache, which holds verdicts by code.
	var closed batchResponse
	call(t, h, http.MethodPost, "/v1/rewards", "/v1/rewards", map[string]any{
		"task_id": "ci/1_add_relu", "completions": []string{"```python\n" + inForward + "```\n"}, "reward_fn": "binary", "options": fast,
	}, &closed)
	if v := closed.Results[0]; v.Status != eval.StatusRewardHack || *closed.Cached[0] != true {
		t.Errorf("the cut code in a closed fence: %s (cached %v), want the cached reward_hack", v.Status, *closed.Cached[0])
	}

	t.Run("stream", func(t *testing.T) {
		rec := do(t, h, http.MethodGet, "/v1/batches/"+batches[0]+"/stream", nil)
		sc := bufio.NewScanner(rec.Body)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			var line batchLine
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			if c := cases[line.Index]; c.truncated && (line.Result.Status != eval.StatusInvalidSubmission || line.Result.ErrorSignature != "truncated") {
				t.Errorf("stream line %d (%s): %s %q", line.Index, c.name, line.Result.Status, line.Result.ErrorSignature)
			}
			n++
		}
		if n != len(cases) {
			t.Errorf("%d stream lines, want %d", n, len(cases))
		}
	})

	t.Run("episode step", func(t *testing.T) {
		var start episodeStart
		call(t, h, http.MethodPost, "/v1/episodes", "/v1/episodes",
			map[string]any{"task_id": "ci/1_add_relu", "max_turns": 2, "reward_fn": "kernelgym_tiered", "options": fast}, &start)
		var step stepResponse
		rec := call(t, h, http.MethodPost, "/v1/episodes/"+start.EpisodeID+"/step", "/v1/episodes/{id}/step",
			map[string]any{"completion": inForward, "finish_reason": "length"}, &step)
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		v := step.Observation.Verdict
		if v.Status != eval.StatusInvalidSubmission || v.ErrorSignature != "truncated" || len(v.HackFlags) != 0 || step.Reward != -0.5 ||
			!strings.Contains(step.Observation.Feedback, "cut off") {
			t.Errorf("step: %s %q flags %v reward %v: %s", v.Status, v.ErrorSignature, v.HackFlags, step.Reward, step.Observation.Feedback)
		}
	})

	// Every logged row of a truncated item says what the API said.
	root := filepath.Join(dataDir, "parquet", "table="+export.TableEvaluations)
	want := len(reward.Names())*len(cases) + 2 // the closed fence, the episode step
	var rows []export.Evaluation
	kgtest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		var err error
		rows, err = readRows[export.Evaluation](root)
		if err == nil && len(rows) != want {
			err = fmt.Errorf("%d rows, want %d", len(rows), want)
		}
		return err
	})
	for _, r := range rows {
		if r.Completion == nil {
			continue
		}
		for _, c := range cases {
			if c.truncated && *r.Completion == c.completion &&
				(r.Status != string(eval.StatusInvalidSubmission) || r.ErrorSignature != "truncated" || len(r.HackFlags) != 0) {
				t.Errorf("row %s (%s): %s %q flags %v", r.EvalID, c.name, r.Status, r.ErrorSignature, r.HackFlags)
			}
		}
	}
}

// checkTruncated: item i of resp, a cut-off completion, is answered
// invalid_submission (truncated), scored as the compile error at index
// yardstick is, and nothing about it says hack.
func checkTruncated(t *testing.T, c truncatedCase, resp batchResponse, i, yardstick int) {
	t.Helper()
	v, note := resp.Results[i], ""
	if resp.Notes[i] != nil {
		note = *resp.Notes[i]
	}
	if v.Status != eval.StatusInvalidSubmission || v.ErrorSignature != "truncated" || len(v.HackFlags) != 0 {
		t.Errorf("%s: %s %q flags %v: %.400s", c.name, v.Status, v.ErrorSignature, v.HackFlags, v.Feedback)
	}
	if *resp.Rewards[i] != *resp.Rewards[yardstick] || !*resp.Valid[i] {
		t.Errorf("%s: reward %v valid %v, want the compile error's %v", c.name, *resp.Rewards[i], *resp.Valid[i], *resp.Rewards[yardstick])
	}
	if strings.Contains(strings.ToLower(note), "hack") || !strings.Contains(v.Feedback, "cut off") {
		t.Errorf("%s: note %q, feedback %.300q", c.name, note, v.Feedback)
	}
}
