package skills

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalise(t *testing.T) {
	tests := []struct{ in, want string }{
		{"NameError: name 'tl.foo' is not defined", "NameError: name <name> is not defined"},
		{"NameError: name 'bar_size_2' is not defined", "NameError: name <name> is not defined"},
		{"NameError: name <name> is not defined", "NameError: name <name> is not defined"},
		{"CompilationError: at 4:11: name 'x' is not defined", "CompilationError: at <n>:<n>: name <name> is not defined"},
		{`File "/tmp/kg_a/cand_1.py", line 12, in forward`, `File <path>, line <n>, in forward`},
		{"RuntimeError: shape '[64, 128]' is invalid for input of size 4096", "RuntimeError: shape <shape> is invalid for input of size <n>"},
		{"RuntimeError: shape '[3, 5]' is invalid for input of size 15", "RuntimeError: shape <shape> is invalid for input of size <n>"},
		{"ValueError: expected torch.Size([2, 3]) got torch.Size([3])", "ValueError: expected <shape> got <shape>"},
		{"RuntimeError: bad pointer 0x7f00aa in /work/z.py", "RuntimeError: bad pointer <hex> in <path>"},
		{"TypeError: unsupported dtype tl.float32 vs float16", "TypeError: unsupported dtype tl.float32 vs float16"},
		{"ValueError: atol 1e-05 exceeded by 0.25.", "ValueError: atol <n> exceeded by <n>."},
		{"  AssertionError:   block   too\tlarge  ", "AssertionError: block too large"},
		{"ValueError: 'not a name!' was given", "ValueError: 'not a name!' was given"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Normalise(tt.in)
			if got != tt.want {
				t.Errorf("Normalise(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Normalise(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
	if got := Normalise(strings.Repeat("é", 400)); len(got) > maxSignature || !utf8.ValidString(got) {
		t.Errorf("long signature: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

func TestErrorClass(t *testing.T) {
	for in, want := range map[string]string{
		"NameError: name <name> is not defined": "NameError",
		"CompilationError: at <n>:<n>: x":       "CompilationError",
		"KeyboardInterrupt":                     "KeyboardInterrupt",
	} {
		if got := ErrorClass(in); got != want {
			t.Errorf("ErrorClass(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzNormalise: signatures come from candidate code's exceptions, so they
// are untrusted: Normalise must not panic, must stay short, valid and stable.
func FuzzNormalise(f *testing.F) {
	f.Add("NameError: name 'tl.foo' is not defined")
	f.Add("RuntimeError: shape '[64, 128]' at /a/b.py:3 0xff 1e-5")
	f.Fuzz(func(t *testing.T, s string) {
		got := Normalise(s)
		if len(got) > maxSignature {
			t.Fatalf("%d bytes", len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from valid input: %q", got)
		}
		// A signature cut without a space to cut at may end in half a
		// token; real ones have spaces.
		cutMidWord := len(got) > maxSignature-8 && !strings.Contains(got, " ")
		if again := Normalise(got); again != got && !cutMidWord {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
	})
}
