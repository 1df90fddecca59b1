package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kernelgate/kernelgate/harness/submission"
)

// readKernel reads a candidate file the way the gateway reads a completion
// (submission.Extract): a saved LLM answer (prose, fenced blocks, chat
// tokens) gives the same code as a plain .py file would. It says on w when
// the code came out of a fence or from between prose lines, so line numbers in
// feedback are not taken for the file's.
func readKernel(path string, w io.Writer) (code, how string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("kernel: %w", err)
	}
	code, how, err = submission.Extract(string(raw))
	if err != nil {
		return "", "", usageError{fmt.Errorf("--kernel %s: %w: put the Python code of ModelNew in the file, or in a ```python block of it", path, err)}
	}
	switch how {
	case submission.HowFence, submission.HowFenceUnterminated:
		fmt.Fprintf(w, "kernelgate: %s: evaluating its last ```python block (line numbers count from that block)\n", path)
	case submission.HowTextInProse:
		fmt.Fprintf(w, "kernelgate: %s: evaluating its code without the prose around it (line numbers count from the first code line)\n", path)
	}
	return code, how, nil
}
