package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/harness"
)

// TestExitCodes covers the paths that need no Python: usage, version and
// an evaluation that cannot run.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
	}{
		{"version", []string{"version"}, exitOK, "protocol " + harness.ProtocolVersion, ""},
		{"version names the embedded harness", []string{"version"}, exitOK, "harness " + harness.EmbeddedSum(), ""},
		{"unknown command", []string{"bogus"}, exitUsage, "", "unknown command"},
		{"bad flag", []string{"eval", "--seeds", "x"}, exitUsage, "", "invalid argument"},
		{"seeds out of range", []string{"eval", "--task", "a.py", "--kernel", "b.py", "--seeds", "0"}, exitUsage, "", "seeds must be in 1..100"},
		{"missing task", []string{"eval", "--task", "/nonexistent/t.py", "--kernel", "k.py"}, exitFailed, "", "no such file"},
		{"required flag", []string{"bench", "--tasks", "."}, exitUsage, "", "required flag"},
		{"serve bad flag", []string{"serve", "--port", "1"}, exitUsage, "", "unknown flag"},
		{"memory limit below the harness bound", []string{"eval", "--task", "a.py", "--kernel", "b.py", "--memory-limit-mb", "63"}, exitUsage, "", "memory_limit_mb must be >= 64"},
		{"require-triton not a bool", []string{"eval", "--task", "a.py", "--kernel", "b.py", "--require-triton=maybe"}, exitUsage, "", "invalid argument"},
		{"serve timeout cap beyond the harness bound", []string{"serve", "--max-timeout-s", "3601"}, exitUsage, "", "max timeout 3601 s: want 1..3600"},
		{"serve memory cap below the harness bound", []string{"serve", "--max-memory-mb", "63"}, exitUsage, "", "max memory 63 MiB: want 64 or more"},
		{"serve extra argument", []string{"serve", "x"}, exitUsage, "", "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdoutHas) || !strings.Contains(stderr.String(), tt.stderrHas) {
				t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
			}
			if n := strings.Count(stderr.String(), "\n"); n > 1 {
				t.Errorf("stderr reason is %d lines, want one", n)
			}
		})
	}
}
