package export

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/eval"
)

// verdictColumns says what EvaluationRow makes of each field of the
// verdict that is not a column of its own name: the columns it is spread
// over, or none. The evaluations row declares its columns flat rather than
// embedding groups built from the verdict: parquet-go (v0.32) reads a null
// optional column of an embedded struct back as a zero, not as nil.
var verdictColumns = map[string][]string{
	"runtime":            {"runtime_median_ms", "runtime_p10_ms", "runtime_p90_ms", "runtime_iterations"},
	"ref_runtime":        {"ref_median_ms"},
	"ref_runtime_before": {"ref_before_median_ms"},
	"ref_runtime_after":  {"ref_after_median_ms"},
	"tolerance":          {"atol", "rtol", "tol_dtype", "tol_source"},
	"stage_ms":           {"stage_times"}, // a list of (stage, ms): loaders have no MAP type
	"env": {"device", "gpu_name", "gpu_uuid", "sm_clock_mhz_before", "sm_clock_mhz_after", "driver",
		"python", "torch", "triton", "harness_version", "sandbox", "sandbox_detail"},
	// The event's, not the verdict's: null for an answer that ran nothing.
	"queue_wait_ms": {"queue_wait_ms"},
	"exec_ms":       {"exec_ms"},
	// Not in the table.
	"wall_check":        nil,
	"device_memory":     nil,
	"reference_checked": nil, // verdict schema 1.7: not a column yet
	"task_info":         nil, // a task check's, and task checks are not logged
}

// Every field of the verdict is a column of the evaluations table under
// its own name, or is said above to be spread over other columns or left
// out: a field added to the verdict fails here until its place in the
// table is decided (and the schema golden and SchemaVersion follow).
func TestEveryVerdictFieldHasItsPlaceInTheRow(t *testing.T) {
	columns := map[string]bool{}
	for _, f := range parquet.SchemaOf(Evaluation{}).Fields() {
		columns[f.Name()] = true
	}
	vt := reflect.TypeFor[eval.Verdict]()
	for i := range vt.NumField() {
		name, _, _ := strings.Cut(vt.Field(i).Tag.Get("json"), ",")
		spread, said := verdictColumns[name]
		switch {
		case !said && !columns[name]:
			t.Errorf("verdict field %s is no column and verdictColumns does not say where it goes", name)
		case said && columns[name] && !slices.Contains(spread, name):
			t.Errorf("verdict field %s is a column of its own name: drop it from verdictColumns", name)
		}
		for _, c := range spread {
			if !columns[c] {
				t.Errorf("verdict field %s: no column %s", name, c)
			}
		}
	}
}
