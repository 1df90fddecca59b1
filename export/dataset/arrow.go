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

// arrow writes each raw table as <table>.arrow (Arrow IPC file format):
// the sink's tables always (empty when absent); skills, search_steps,
// searches and llm_calls where present.
func (b *build) arrow() error {
	f := b.spec.Filter
	if err := arrowTable(b, export.TableEvaluations, b.keepEvaluation); err != nil {
		return err
	}
	if err := arrowTable(b, export.TableEpisodeSteps, f.episodeStep); err != nil {
		return err
	}
	if err := arrowTable(b, export.TableRejected, f.rejected); err != nil {
		return err
	}
	if tableExists(b.root, export.TableSkills) {
		if err := arrowTable(b, export.TableSkills, f.skill); err != nil {
			return err
		}
	}
	if tableExists(b.root, export.TableSearchSteps) {
		if err := arrowTable(b, export.TableSearchSteps, f.searchStep); err != nil {
			return err
		}
	}
	if tableExists(b.root, export.TableSearches) {
		if err := arrowTable(b, export.TableSearches, f.search); err != nil {
			return err
		}
	}
	if tableExists(b.root, export.TableLLMCalls) {
		return arrowTable(b, export.TableLLMCalls, f.llmCall)
	}
	return nil
}

// arrowTable filters table's rows as typed rows (one filter code path for
// every format), then converts them: Parquet in memory with the log's own
// schema, read back by pqarrow into Arrow records.
func arrowTable[T any](b *build, table string, keep func(T) bool) error {
	rows, files, err := readTable(b.log(), b.root, table, b.spec.Filter, keep)
	if err != nil {
		return err
	}
	b.logSources(files)
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
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
	name := table + ".arrow"
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
