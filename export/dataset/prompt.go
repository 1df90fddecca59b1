package dataset

import (
	"encoding/json"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/tasks"
)

// Message is one chat message (verl's prompt, TRL's conversational layout).
type Message struct {
	Role    string `parquet:"role" json:"role"`
	Content string `parquet:"content" json:"content"`
}

// userPrompt is the one-message prompt of a task: tasks.Prompt, as used
// at inference.
func userPrompt(source string) []Message {
	return []Message{{Role: "user", Content: tasks.Prompt(source)}}
}

// answer is code as the assistant's reply: one fenced block, the form the
// prompt asks for.
func answer(code string) []Message {
	return []Message{{Role: "assistant", Content: "```python\n" + strings.TrimRight(code, "\n") + "\n```"}}
}

// sources finds a row's task source: its task_source column, else a suite
// task with the row's task hash (logs written before the column).
type sources map[string]string // task hash → source

func newSources(ts []tasks.Task) sources {
	s := sources{}
	for _, t := range ts {
		s[t.TaskHash] = t.Source
	}
	return s
}

func (s sources) of(r export.Evaluation) (string, bool) {
	if r.TaskSource != "" {
		return r.TaskSource, true
	}
	src, ok := s[r.TaskHash]
	return src, ok && r.TaskHash != ""
}

// promptKey groups rows of the same task and prompt.
func promptKey(r export.Evaluation, source string, prompt []Message) string {
	h := r.TaskHash
	if h == "" {
		h = eval.HashSource(source)
	}
	p, _ := json.Marshal(prompt)
	return r.TaskID + "\x00" + h + "\x00" + eval.HashSource(string(p))
}

// loggedPrompt is the prompt a row logged, nil when it logged none.
func loggedPrompt(r export.Evaluation) []Message {
	if len(r.Prompt) == 0 {
		return nil
	}
	out := make([]Message, len(r.Prompt))
	for i, m := range r.Prompt {
		out[i] = Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// reply is what the model answered: its logged completion, else the code
// as one fenced block (rows logged from code alone).
func reply(r export.Evaluation) []Message {
	if r.Completion != nil && strings.TrimSpace(*r.Completion) != "" {
		return []Message{{Role: "assistant", Content: *r.Completion}}
	}
	return answer(r.Code)
}
