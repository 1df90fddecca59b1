package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadSettings(t *testing.T) {
	tests := []struct {
		name string
		file string // suite.json's text; "" writes no file
		want Settings
		err  string
	}{
		{name: "no file", want: Settings{}},
		{name: "limit", file: `{"max_mb": 16384}`, want: Settings{MaxMB: 16384}},
		{name: "empty object", file: `{}`, want: Settings{}},
		{name: "typo", file: `{"max_mib": 16384}`, err: `unknown field "max_mib"`},
		{name: "negative", file: `{"max_mb": -1}`, err: "negative"},
		{name: "not json", file: `max_mb = 1`, err: "suite.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(dir, SettingsFile), []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadSettings(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// A suite's settings come with it from Suites; a bad suite.json fails the load.
func TestSuitesReadSettings(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"big/1_a.py": "", "big/suite.json": `{"max_mb": 8192}`, "small/1_b.py": "",
		"bad/1_c.py": "", "bad/suite.json": `{"max_mb": "lots"}`,
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Suites(root); err == nil || !strings.Contains(err.Error(), "bad/suite.json") {
		t.Fatalf("a bad suite.json: err %v", err)
	}
	os.Remove(filepath.Join(root, "bad", SettingsFile))
	suites, err := Suites(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, s := range suites {
		got[s.Name] = s.Settings.MaxMB
	}
	if got["big"] != 8192 || got["small"] != 0 || got["bad"] != 0 || len(got) != 3 {
		t.Errorf("max_mb by suite %v", got)
	}
	one, err := Suites(filepath.Join(root, "big"))
	if err != nil || len(one) != 1 || one[0].Settings.MaxMB != 8192 {
		t.Errorf("one suite: %+v, %v", one, err)
	}
}
