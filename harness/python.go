package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// setupHint says how to get a Python with torch and triton; it ends every
// error about the interpreter.
const setupHint = "run `make setup` or set " + EnvPython + " (or --python) to a python with torch and triton"

// ResolvePython picks the interpreter for the zygotes: explicit (from
// --python or $KERNELGATE_PYTHON) if given, else the .venv next to the
// binary (<dir of executable>/../.venv/bin/python), else ./.venv/bin/python,
// else python3 on PATH. It only checks that the file exists: whether it has
// torch is learnt from the zygote's hello, without extra processes.
func ResolvePython(explicit string) (string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("harness.ResolvePython: %q: %w; %s", explicit, err, setupHint)
		}
		return p, nil
	}
	var candidates []string
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "..", ".venv", "bin", "python"))
	}
	candidates = append(candidates, filepath.Join(".venv", "bin", "python"))
	for _, c := range candidates {
		if isExecutable(c) {
			abs, err := filepath.Abs(c)
			if err != nil {
				return c, nil
			}
			return abs, nil
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", fmt.Errorf("harness.ResolvePython: no .venv and no python3 on PATH: %w; %s", errors.Unwrap(err), setupHint)
	}
	return p, nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
