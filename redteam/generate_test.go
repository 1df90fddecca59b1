package redteam

import (
	"strings"
	"testing"
)

const testReference = `import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + 1


def get_inputs():
    return [torch.randn(4, 4)]
`

const testSolution = `"""Doc."""
from __future__ import annotations
import torch.nn as nn


@triton.jit
def k(x_ptr):
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
`

func TestGenerate(t *testing.T) {
	c := Class{Name: "demo", Catalogue: "cache", Body: "# class: demo\nclass ModelNew(RT_Honest):\n    pass\n"}
	code, err := Generate(c, testReference, testSolution, Prelude{CanaryFiles: []string{"/tmp/x"}, Token: "tok-3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"class RT_Honest(nn.Module):",
		"super(RT_Honest, self).__init__()",
		"@triton.jit\ndef k(x_ptr):",                           // the solution's kernels stay
		`RT_REFERENCE_SOURCE = "import torch\nimport torch.nn`, // the reference as a string literal
		`RT_CANARY_FILES = ["/tmp/x"]`,
		`RT_TOKEN = "tok-3"`,
		"class ModelNew(RT_Honest):",
	} {
		if !strings.Contains(code, want) {
			t.Errorf("variant lacks %q:\n%s", want, code)
		}
	}
	if !strings.HasPrefix(code, "from __future__ import annotations\n") || strings.Count(code, "__future__") != 1 {
		t.Errorf("the __future__ import must be hoisted to the first line:\n%s", code)
	}
	if strings.Count(code, "class ModelNew") != 1 {
		t.Errorf("exactly one ModelNew (the template's) must remain:\n%s", code)
	}
}

func TestGenerateRefusesWhatItCannotTransform(t *testing.T) {
	c := Classes()[0]
	if _, err := Generate(c, testReference, "def f(): pass\n", Prelude{}); err == nil || !strings.Contains(err.Error(), "no top-level class ModelNew") {
		t.Errorf("a solution without ModelNew: %v", err)
	}
	if _, err := Generate(c, "x = 1\n", testSolution, Prelude{}); err == nil || !strings.Contains(err.Error(), "no top-level class Model") {
		t.Errorf("a reference without Model: %v", err)
	}
}
