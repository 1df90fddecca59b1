package export

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PartFiles lists the finished part files under root (table=*/date=*/
// *.parquet, dot files aside: those are being written, or quarantined),
// sorted. An unreadable directory is an error.
func PartFiles(root string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "table=*", "date=*"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		es, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if n := e.Name(); e.Type().IsRegular() && !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".parquet") {
				out = append(out, filepath.Join(d, n))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
