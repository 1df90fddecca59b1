package redteam

import (
	"os"
	"path/filepath"
	"strings"
)

// LeftoverDirs are the host's shared places a variant may try to leave
// something in for later evaluations; an evaluation's private /tmp and
// /dev/shm must keep it from reaching them.
var LeftoverDirs = []string{os.TempDir(), "/dev/shm"}

// Leftovers finds, in dirs, the entries whose names carry a variant's token
// (RT_TOKEN), removes them, and returns them by case index. Only the
// run's own tokens are looked for: nothing else in dirs is touched.
func Leftovers(cases []Case, dirs ...string) map[int][]string {
	out := map[int][]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			for i, c := range cases {
				if c.Class == nil || c.Token == "" || !strings.Contains(e.Name(), c.Token) {
					continue
				}
				path := filepath.Join(d, e.Name())
				out[i] = append(out[i], path)
				os.RemoveAll(path)
			}
		}
	}
	return out
}
