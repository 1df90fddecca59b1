package harness

import (
	"bufio"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigEnvAndValidate(t *testing.T) {
	env := map[string]string{
		EnvPython: "/opt/py", EnvDevice: "cpu", EnvConcurrency: "3", EnvStartTimeout: "90s",
	}
	var c Config
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.Python != "/opt/py" || c.Device != "cpu" || c.Concurrency != 3 || c.StartTimeout != 90*time.Second {
		t.Errorf("ApplyEnv: %+v", c)
	}
	bad := map[string]string{EnvConcurrency: "many"}
	if err := new(Config).ApplyEnv(func(k string) string { return bad[k] }); err == nil {
		t.Error("ApplyEnv accepted a non-integer concurrency")
	}
	for _, tt := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{}, true}, {Config{Device: "auto"}, true}, {Config{Device: "2"}, true},
		{Config{Device: "gpu"}, false}, {Config{Concurrency: -1}, false},
	} {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v", tt.cfg, err)
		}
	}
}

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	br := bufio.NewReaderSize(strings.NewReader("a\n"+long+"\nb\nc"), 16)
	want := []struct {
		line string
		err  error
	}{{"a", nil}, {"", errLineTooLong}, {"b", nil}}
	for i, w := range want {
		got, err := readLine(br, 50)
		if string(got) != w.line || !errors.Is(err, w.err) {
			t.Errorf("line %d: %q %v, want %q %v", i, got, err, w.line, w.err)
		}
	}
	if _, err := readLine(br, 50); err == nil {
		t.Error("an unterminated last line must not be a record")
	}
}
