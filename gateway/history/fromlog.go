package history

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/export"
)

// logRow is the columns of the evaluations table the history reads: a
// row's code, completion and prompt, most of its bytes, are not decoded.
type logRow struct {
	TS        time.Time `parquet:"ts,timestamp(millisecond)"`
	Status    string    `parquet:"status"`
	RewardFn  string    `parquet:"reward_fn"`
	Reward    *float64  `parquet:"reward,optional"`
	TaskID    string    `parquet:"task_id,optional"`
	TaskName  string    `parquet:"task_name,optional"`
	TaskHash  string    `parquet:"task_hash"`
	HackFlags []string  `parquet:"hack_flags,list"`
	Speedup   *float64  `parquet:"speedup,optional"`
}

// Rebuild adds the evaluations logged under root (the sink's directory:
// table=evaluations/date=.../*.parquet) from a day back until before
// (exclusive): those from before on were seen live. It reads only the
// date partitions of the day, only files written since the day began
// (their modification time; a part is written after its rows happened),
// and only the columns above. A file that does not read is skipped and
// logged: the history is a view, the log's readers quarantine.
func (h *History) Rebuild(root string, before time.Time, log *slog.Logger) (Rebuilt, error) {
	start := time.Now()
	since := h.now().Truncate(CoarseStep).Add(-CoarseSpan + CoarseStep) // the day's oldest step the view holds
	files, err := recentParts(root, since)
	out := Rebuilt{}
	if err != nil {
		out.Error = err.Error()
		h.setLoaded(out)
		return out, err
	}
	for _, p := range files {
		rows, err := export.ReadRows[logRow](p)
		if err != nil {
			log.Warn("history: a part of the evaluation log does not read; left out", "file", p, "err", err)
			continue
		}
		out.Files++
		for _, r := range rows {
			if r.TS.Before(since) || !r.TS.Before(before) {
				continue
			}
			out.Rows++
			h.Add(Eval{At: r.TS, Status: r.Status, RewardFn: r.RewardFn, Reward: r.Reward, TaskHash: r.TaskHash,
				TaskName: r.TaskName, TaskID: r.TaskID, HackFlags: r.HackFlags, Speedup: r.Speedup})
		}
	}
	out.Done, out.MS, out.At = true, float64(time.Since(start).Microseconds())/1000, h.now()
	h.setLoaded(out)
	return out, nil
}

func (h *History) setLoaded(r Rebuilt) {
	h.mu.Lock()
	h.loaded = r
	h.mu.Unlock()
}

// recentParts lists the evaluation parts under root that may hold rows
// from since on: date partitions from since's day, files modified since,
// no dot files (being written) and no parts a compacted file replaced.
func recentParts(root string, since time.Time) ([]string, error) {
	tdir := filepath.Join(root, "table="+export.TableEvaluations)
	dates, err := os.ReadDir(tdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	day := since.UTC().Format(time.DateOnly)
	var out []string
	for _, d := range dates {
		date, ok := strings.CutPrefix(d.Name(), "date=")
		if !d.IsDir() || !ok || date < day {
			continue
		}
		dir := filepath.Join(tdir, d.Name())
		replaced, err := export.PartsReplaced(dir)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		es, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		for _, e := range es {
			name := e.Name()
			if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".parquet") || replaced[name] {
				continue
			}
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(since) {
				continue
			}
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out, nil
}
