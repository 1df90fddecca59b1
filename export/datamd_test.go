package export

import (
	"os"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// DATA.md lists every column of the tables it describes column by column,
// and names the schema version the sink writes: a column added without a
// word there fails here.
func TestDataMDIsCurrent(t *testing.T) {
	data, err := os.ReadFile("DATA.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if !strings.Contains(doc, "schema version "+SchemaVersion+" ") {
		t.Errorf("DATA.md does not say schema version %s", SchemaVersion)
	}
	for table, row := range map[string]any{TableEvaluations: Evaluation{}, TableEpisodeSteps: EpisodeStep{}} {
		for _, f := range parquet.SchemaOf(row).Fields() {
			if !strings.Contains(doc, "`"+f.Name()+"`") {
				t.Errorf("DATA.md does not name %s.%s", table, f.Name())
			}
		}
	}
}
