package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
)

// What a reader of the log sees is the schema in a file's footer, not the
// Go type that wrote it: the rows are written as the sink writes them and
// the footer's schema elements (names, physical and logical types,
// repetition, nesting, in order) are held to a golden per table. A change
// to how a row type is declared (embedded column groups, moved types) must
// leave these files byte-identical.
func TestWrittenSchemaGolden(t *testing.T) {
	tests := []struct {
		table string
		write func(dir string) error
	}{
		{TableEvaluations, func(dir string) error {
			return writePart(dir, "p.parquet", []Evaluation{EvaluationRow(evalEvent("e1", testTime))}, nil)
		}},
		{TableEpisodeSteps, func(dir string) error {
			return writePart(dir, "p.parquet", []EpisodeStep{EpisodeStepRow(stepEvent("s1", testTime))}, nil)
		}},
		{TableRejected, func(dir string) error {
			return writePart(dir, "p.parquet", []Rejected{{EventID: "r1", TS: testTime, Subject: "x", Data: []byte("{")}}, nil)
		}},
		{TableSkills, func(dir string) error { return writePart(dir, "p.parquet", []Skill{{EventID: "k1"}}, nil) }},
		{TableSearchSteps, func(dir string) error { return writePart(dir, "p.parquet", []SearchStep{{EventID: "s1"}}, nil) }},
		{TableSearches, func(dir string) error { return writePart(dir, "p.parquet", []Search{{EventID: "q1"}}, nil) }},
		{TableLLMCalls, func(dir string) error { return writePart(dir, "p.parquet", []LLMCall{{EventID: "l1"}}, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.table, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.write(dir); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.table+".written.golden", footerSchema(t, filepath.Join(dir, "p.parquet")))
		})
	}
}

// footerSchema lists the schema elements of the file at path, one a line,
// indented by depth.
func footerSchema(t *testing.T, path string) string {
	t.Helper()
	pf := openTestParquet(t, path)
	var b strings.Builder
	var left []int32 // children still to list, per open group
	for _, el := range pf.Metadata().Schema {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", len(left)), el.Name)
		field(&b, "repetition", el.RepetitionType)
		field(&b, "type", el.Type)
		field(&b, "length", el.TypeLength)
		field(&b, "converted", el.ConvertedType)
		if s := el.LogicalType.String(); s != "" && s != "<nil>" {
			fmt.Fprintf(&b, " logical=%s", s)
		}
		field(&b, "children", el.NumChildren)
		b.WriteByte('\n')
		if len(left) > 0 {
			left[len(left)-1]--
		}
		if n, ok := el.NumChildren.Get(); ok && n > 0 {
			left = append(left, n)
		}
		for len(left) > 0 && left[len(left)-1] == 0 {
			left = left[:len(left)-1]
		}
	}
	return b.String()
}

func field[T any](b *strings.Builder, name string, v thrift.Null[T]) {
	if x, ok := v.Get(); ok {
		fmt.Fprintf(b, " %s=%v", name, x)
	}
}

// openTestParquet opens the Parquet file at path for the test's length.
func openTestParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}
