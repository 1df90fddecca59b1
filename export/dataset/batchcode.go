package dataset

import (
	"cmp"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/export"
)

// ItemCode is what the log holds of one item's submission (GET
// /v1/batches/{id}/code): the batch store keeps verdicts, the log the code.
type ItemCode struct {
	Index      int
	EvalID     string
	Code       string
	Completion *string
}

// codeRow and evalIDRow are the columns read: eval_id of every row, the
// rest only of a batch's rows (a day's log is mostly code).
type codeRow struct {
	EvalID     string  `parquet:"eval_id"`
	Code       string  `parquet:"code"`
	Completion *string `parquet:"completion,optional"`
}

type evalIDRow struct {
	EvalID string `parquet:"eval_id"`
}

// BatchCode reads the logged items of batch id (eval_ids "<id>-<index>",
// dispatch.EvalID) from the evaluations table, in the partitions from
// created's day on (an item is logged when it ends), sorted by index. Items
// not logged yet are absent. A part that is not valid Parquet is moved
// aside, as the exports do.
func BatchCode(log *slog.Logger, dataDir, id string, created time.Time) ([]ItemCode, error) {
	root, err := logRoot(dataDir)
	if err != nil {
		return nil, err
	}
	got, _, err := readParts(log, root, "evaluations", Filter{Since: created}, func(p string) ([]ItemCode, error) {
		return batchCodeIn(p, id+"-")
	})
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var out []ItemCode
	for _, c := range got {
		if !seen[c.Index] { // logged twice (a redelivered job): one item
			seen[c.Index] = true
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b ItemCode) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}

// itemRows finds the rows of part path whose eval_id is prefix<index>: their
// row numbers and indices.
func itemRows(path, prefix string) (rows []int64, index []int, err error) {
	ids, err := export.ReadRows[evalIDRow](path)
	if err != nil {
		return nil, nil, err
	}
	for row, x := range ids {
		rest, ok := strings.CutPrefix(x.EvalID, prefix)
		if i, aerr := strconv.Atoi(rest); ok && aerr == nil && i >= 0 {
			rows, index = append(rows, int64(row)), append(index, i)
		}
	}
	return rows, index, nil
}

// batchCodeIn reads the rows of part path whose eval_id is prefix<index>.
func batchCodeIn(path, prefix string) ([]ItemCode, error) {
	rows, index, err := itemRows(path, prefix)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	got, err := export.ReadRowsAt[codeRow](path, rows)
	if err != nil {
		return nil, err
	}
	out := make([]ItemCode, 0, len(got))
	for k, c := range got {
		out = append(out, ItemCode{Index: index[k], EvalID: c.EvalID, Code: c.Code, Completion: c.Completion})
	}
	return out, nil
}
