package main

import "testing"

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "512MiB", want: 512 << 20},
		{in: "2GiB", want: 2 << 30},
		{in: "1.5 KiB", want: 1536},
		{in: "3MB", want: 3e6},
		{in: "4096", want: 4096},
		{in: "10B", want: 10},
		{in: "lots", bad: true},
		{in: "-1MiB", bad: true},
		{in: "", bad: true},
	} {
		got, err := parseBytes(c.in)
		if c.bad != (err != nil) || !c.bad && got != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}
