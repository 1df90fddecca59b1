package dataset

import (
	"cmp"
	"log/slog"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/export"
)

// LoggedItem is one item of a batch as the evaluations table holds it.
type LoggedItem struct {
	Index int
	Row   export.Evaluation
}

// BatchRows reads the evaluations rows of batch id (eval_ids
// "<id>-<index>") from the partitions from created's day on, one per item
// (the first of an item logged twice, by a redelivered job), sorted by
// index. A part that is not valid Parquet is moved aside, as the exports do.
func BatchRows(log *slog.Logger, dataDir, id string, created time.Time) ([]LoggedItem, error) {
	root, err := logRoot(dataDir)
	if err != nil {
		return nil, err
	}
	prefix := id + "-"
	got, _, err := readParts(log, root, export.TableEvaluations, Filter{Since: created}, func(p string) ([]LoggedItem, error) {
		at, index, err := itemRows(p, prefix)
		if err != nil || len(at) == 0 {
			return nil, err
		}
		rows, err := export.ReadRowsAt[export.Evaluation](p, at)
		if err != nil {
			return nil, err
		}
		out := make([]LoggedItem, len(rows))
		for k, r := range rows {
			out[k] = LoggedItem{Index: index[k], Row: r}
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var out []LoggedItem
	for _, it := range got {
		if !seen[it.Index] {
			seen[it.Index] = true
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b LoggedItem) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}
