//go:build redteamweak

package harness

// A binary built with -tags redteamweak runs a harness with one defence
// removed on purpose, so that the red-team test (cmd/kernelgate,
// redteam_weak_test.go) can show that `kernelgate redteam` fails when a
// defence is gone. No production build contains this file, and nothing a
// request or the environment sets reaches it.
//
// The defence removed: the judge's Triton policy, which flags a candidate
// that launches none of its own @triton.jit kernels (decoy, no_triton). The
// patched package hashes differently, so it is extracted beside, never over,
// the real one.

import (
	"bytes"
	"fmt"
)

const (
	weakFile = "py/kgharness/judge/checks.py"
	weakFrom = `    if judge.launches > 0 or not judge.opts["require_triton"]:`
	weakTo   = `    if True:  # redteamweak: the Triton policy is switched off`
)

func readPy(name string) ([]byte, error) {
	data, err := pyFS.ReadFile(name)
	if err != nil || name != weakFile {
		return data, err
	}
	if !bytes.Contains(data, []byte(weakFrom)) {
		// The judge changed: a weak build that removes nothing proves nothing.
		panic(fmt.Sprintf("redteamweak: %s no longer contains %q", weakFile, weakFrom))
	}
	return bytes.Replace(data, []byte(weakFrom), []byte(weakTo), 1), nil
}
