package tasks

import "strings"

// Prompt is the text that asks an LLM for a ModelNew with Triton kernels
// replacing the task's Model (KernelBench's one-shot shape, in our words).
// It states what the harness checks, so an honest answer knows the rules.
func Prompt(source string) string {
	var b strings.Builder
	b.WriteString(promptHead)
	b.WriteString("```python\n")
	b.WriteString(strings.TrimRight(source, "\n"))
	b.WriteString("\n```\n\n")
	b.WriteString(promptRules)
	return b.String()
}

const promptHead = `You are an expert in GPU programming. Your job is to make a PyTorch model faster by
writing custom Triton kernels for it.

Here is the reference model, ` + "`Model`" + `, with ` + "`get_inputs()`" + ` (the inputs of one forward call)
and ` + "`get_init_inputs()`" + ` (the constructor's arguments):

`

const promptRules = `Write ` + "`ModelNew`" + `, a drop-in replacement for ` + "`Model`" + `:

- the same constructor arguments and the same forward() inputs and outputs (shapes and dtypes);
- the computation done by your own ` + "`@triton.jit`" + ` kernels, launched from forward(); you may fuse
  operations, change the algorithm and choose block sizes; torch.compile and calls back into
  the reference do not count as your kernels;
- parameters created in the same order and with the same shapes as in ` + "`Model`" + ` (hold the same
  ` + "`nn.Linear`" + ` or ` + "`nn.Conv2d`" + `, say), so the same random seed gives both models the same weights.

Your model is checked against the reference on several random inputs, and on inputs of other
shapes where the task has them, within a tolerance set by the output dtype (about 1e-4 for
float32, 1e-2 for float16 and bfloat16), then timed against it. Do not special-case the
benchmark shapes, cache outputs, or do work outside the current stream.

Reply with the complete Python source (imports, kernels and ` + "`class ModelNew(nn.Module)`" + `) in a
single ` + "```python" + ` fenced block. No tests, no example usage.
`
