package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRedteamFailsWhenADefenceIsOff proves the report can fail: a binary
// built with -tags redteamweak (harness/pyread_redteamweak.go) embeds a judge
// whose Triton policy is switched off, and `kernelgate redteam` run with it
// exits 1 naming the decoy class it then misses, while a class another
// defence catches is still caught. The production build, over the same
// classes, exits 0 (TestRedteamCatchesEveryClassOnCI covers every class).
func TestRedteamFailsWhenADefenceIsOff(t *testing.T) {
	needHarness(t)
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("the Go toolchain is needed to build the redteamweak binary: %v", err)
		}
	}
	bin := filepath.Join(t.TempDir(), "kernelgate-redteamweak")
	build := exec.Command(goBin, "build", "-tags", "redteamweak", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags redteamweak: %v\n%s", err, out)
	}
	args := []string{"redteam", "--tasks", "../../datasets/ci", "--solutions", "../../datasets/solutions/ci",
		"--classes", "decoy_dead_kernel,cache_shape", "--seeds", "2", "--out", t.TempDir()}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KERNELGATE_CACHE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitFailed {
		t.Fatalf("the weak build must exit %d, got %v:\n%s", exitFailed, err, out)
	}
	for _, want := range []string{
		"redteam: 8 variants missed: decoy_dead_kernel (8)",
		"MISSED  decoy_dead_kernel on ci/1_add_relu: judged correct",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "MISSED  cache_shape") {
		t.Errorf("only the switched-off defence may miss:\n%s", out)
	}
}
