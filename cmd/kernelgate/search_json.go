package main

import (
	"encoding/json"
	"io"

	"github.com/kernelgate/kernelgate/rollout/runner"
)

// searchJSON is `search --json`'s one object.
type searchJSON struct {
	SearchID  string         `json:"search_id"`
	TaskID    string         `json:"task_id"`
	State     string         `json:"state"`
	Error     string         `json:"error,omitempty"`
	Policy    string         `json:"policy"`
	Steps     int            `json:"steps"`
	Tokens    int            `json:"tokens"` // prompt + completion
	TokensIn  int            `json:"tokens_in"`
	TokensOut int            `json:"tokens_out"`
	Best      map[string]any `json:"best"` // the best node's verdict, with code, node and reward; null if none compiled
	Actions   map[string]int `json:"actions"`
	Out       string         `json:"out,omitempty"` // the file the best kernel was written to
}

func writeSearchJSON(w io.Writer, st runner.Status, out string) error {
	j := searchJSON{SearchID: st.SearchID, TaskID: st.TaskID, State: st.State, Error: st.Error, Policy: st.Policy,
		Steps: st.Steps, Tokens: st.TokensIn + st.TokensOut, TokensIn: st.TokensIn, TokensOut: st.TokensOut,
		Actions: st.Actions, Out: out}
	if b := st.Best; b != nil {
		// The verdict's own fields, flattened, plus what identifies the kernel.
		raw, err := json.Marshal(b.Verdict)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &j.Best); err != nil {
			return err
		}
		j.Best["code"], j.Best["node"], j.Best["reward"] = b.Code, b.Node, b.Reward
	}
	return writeJSON(w, j)
}
