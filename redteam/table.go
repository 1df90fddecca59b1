package redteam

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report for a terminal: one line per class, then the
// misses and failed controls with why, then the totals.
func WriteTable(w io.Writer, r Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "per task, in the order %s: + caught, M missed, g missed by a known gap, . skipped, E error\n\n",
		strings.Join(r.Tasks, " "))
	fmt.Fprintln(tw, "CLASS\tCATALOGUE\tPER TASK\tGENERATED\tCAUGHT\tMISSED\tSKIPPED\tCAUGHT AS")
	for _, c := range r.Classes {
		missed := fmt.Sprint(c.Missed)
		if c.Gap != "" {
			missed = fmt.Sprintf("%d (gap)", c.KnownGap)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%s\n", c.Name, c.Catalogue, perTask(c, r.Tasks), c.Generated,
			c.Caught, missed, c.Skipped, caughtAs(c))
	}
	tw.Flush()
	for _, c := range r.Classes {
		for _, o := range c.Tasks {
			switch {
			case o.Miss != "" && o.Error == "" && o.Skipped == "" && c.Gap != "":
				fmt.Fprintf(w, "GAP     %s on %s: %s (known harness gap: %s)%s\n", c.Name, o.Task, o.Miss, c.Gap, savedNote(o))
			case o.Miss != "" && o.Error == "" && o.Skipped == "":
				fmt.Fprintf(w, "MISSED  %s on %s: %s (status %s, flags [%s])%s\n", c.Name, o.Task, o.Miss, o.Status,
					strings.Join(o.Flags, ", "), savedNote(o))
			case o.Error != "":
				fmt.Fprintf(w, "ERROR   %s on %s: %s\n", c.Name, o.Task, firstLine(o.Error))
			}
		}
	}
	ok := 0
	for _, o := range r.Controls {
		if o.Caught {
			ok++
			continue
		}
		why := o.Miss
		if o.Error != "" {
			why = firstLine(o.Error)
		}
		fmt.Fprintf(w, "CONTROL %s: %s%s\n", o.Task, why, savedNote(o))
	}
	for _, name := range r.GapsClosed {
		fmt.Fprintf(w, "CLOSED  %s: every variant caught; its known gap is closed: remove the class's gap: line\n", name)
	}
	fmt.Fprintf(w, "\n%d tasks, %d classes (%s): %d variants generated, %d evaluated, %d caught, %d missed, %d missed by known gaps, %d skipped, %d errors; controls %d of %d correct; %.1f s\n",
		len(r.Tasks), len(r.Classes), r.Mode, r.Generated, r.Evaluated, r.Caught, r.Missed, r.KnownGap, r.Skipped, r.Errors, ok, len(r.Controls), r.WallS)
}

// caughtAs is "status[flags] xN" for each way the class was caught.
func caughtAs(c ClassReport) string {
	counts := map[string]int{}
	for _, o := range c.Tasks {
		if o.Caught {
			k := string(o.Status)
			if len(o.Flags) > 0 {
				k += "[" + strings.Join(o.Flags, ",") + "]"
			}
			counts[k]++
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s x%d", k, counts[k])
	}
	if len(keys) == 0 {
		return "-"
	}
	return strings.Join(keys, ", ")
}

func savedNote(o Outcome) string {
	if o.Saved == "" {
		return ""
	}
	return "; saved to " + o.Saved
}

// perTask is one mark per task, in the report's task order.
func perTask(c ClassReport, tasks []string) string {
	marks := make([]byte, len(tasks))
	for i, t := range tasks {
		marks[i] = ' '
		for _, o := range c.Tasks {
			if o.Task == t {
				marks[i] = Mark(c, o)
			}
		}
	}
	return string(marks)
}

// Mark is the table's mark for one of c's outcomes: + caught, M missed,
// g missed by c's known gap, . skipped, E error (the dashboard shows the
// same marks).
func Mark(c ClassReport, o Outcome) byte {
	switch {
	case o.Skipped != "":
		return '.'
	case o.Error != "":
		return 'E'
	case o.Caught:
		return '+'
	case c.Gap != "":
		return 'g'
	}
	return 'M'
}
