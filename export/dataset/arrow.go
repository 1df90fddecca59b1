package dataset

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/export"
)

// arrow writes each raw table as <table>.arrow (Arrow IPC file format): the
// sink's tables; skills, search_steps, searches and llm_calls where the log
// has them. Each table is filtered on the columns it has (Filter), and the
// manifest's filters_applied says, per file, which filters selected its
// rows: a table without a filter's column (llm_calls has no status) is
// whole, not silently half-filtered. A table no row of which matched is not
// written (Hugging Face datasets refuses a file of 0 rows): the manifest's
// empty lists it.
func (b *build) arrow() error {
	f := b.spec.Filter
	b.m.FiltersApplied = map[string][]string{}
	if err := arrowTable(b, export.TableEvaluations, b.keepEvaluation, "time", "task", "status", "speedup", "valid"); err != nil {
		return err
	}
	if err := arrowTable(b, export.TableEpisodeSteps, f.episodeStep, "time", "task", "status", "speedup"); err != nil {
		return err
	}
	if err := arrowTable(b, export.TableRejected, f.rejected, "time"); err != nil {
		return err
	}
	if tableExists(b.root, export.TableSkills) {
		if err := arrowTable(b, export.TableSkills, f.skill, "time", "skill_status"); err != nil {
			return err
		}
	}
	if tableExists(b.root, export.TableSearchSteps) {
		if err := arrowTable(b, export.TableSearchSteps, f.searchStep, "time", "task", "status", "speedup"); err != nil {
			return err
		}
	}
	if tableExists(b.root, export.TableSearches) {
		if err := arrowTable(b, export.TableSearches, f.search, "time", "task"); err != nil {
			return err
		}
	}
	if tableExists(b.root, export.TableLLMCalls) {
		return arrowTable(b, export.TableLLMCalls, f.llmCall, "time")
	}
	return nil
}

// applied names the filters of the request that select rows of a table
// with the given filter columns: time (since, until), task, status (a
// verdict's), skill_status (a skill's, named status), speedup
// (min_speedup), valid (invalid evaluations left out).
func (f Filter) applied(cols ...string) []string {
	out := []string{}
	add := func(on bool, name string) {
		if on {
			out = append(out, name)
		}
	}
	for _, c := range cols {
		switch c {
		case "time":
			add(!f.Since.IsZero(), "since")
			add(!f.Until.IsZero(), "until")
		case "task":
			add(len(f.Tasks) > 0, "task")
		case "status":
			add(len(f.statuses(false)) > 0, "status")
		case "skill_status":
			add(len(f.statuses(true)) > 0, "status")
		case "speedup":
			add(f.MinSpeedup != nil, "min_speedup")
		case "valid":
			add(!f.IncludeInvalid, "valid")
		}
	}
	return out
}

// arrowTable filters table's rows as typed rows (one filter code path for
// every format; cols are the filter columns the table has, for the
// manifest), then converts them: Parquet in memory with the log's own
// schema, read back by pqarrow into Arrow records.
func arrowTable[T any](b *build, table string, keep func(T) bool, cols ...string) error {
	rows, files, err := readTable(b.log(), b.root, table, b.spec.Filter, keep)
	if err != nil {
		return err
	}
	b.logSources(files)
	name := table + ".arrow"
	b.m.FiltersApplied[name] = b.spec.Filter.applied(cols...)
	if len(rows) == 0 {
		b.m.Empty = append(b.m.Empty, name)
		return nil
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if err := export.WriteRows(w, rows); err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	mem := memory.DefaultAllocator
	tbl, err := pqarrow.ReadTable(b.ctx, bytes.NewReader(buf.Bytes()), nil, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return fmt.Errorf("%s: to arrow: %w", table, err)
	}
	defer tbl.Release()
	fh, err := os.Create(filepath.Join(b.dir, name))
	if err != nil {
		return err
	}
	defer fh.Close()
	iw, err := ipc.NewFileWriter(fh, ipc.WithSchema(tbl.Schema()), ipc.WithAllocator(mem))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	tr := array.NewTableReader(tbl, 64<<10)
	defer tr.Release()
	for tr.Next() {
		if err := iw.Write(tr.RecordBatch()); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := tr.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := iw.Close(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	b.m.addFile(name, len(rows))
	return nil
}
