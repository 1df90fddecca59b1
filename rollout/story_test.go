package rollout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var markerRE = regexp.MustCompile(`# (SPEEDUP=[0-9.]+|BROKEN|WRONG)`)

// story is a scripted LLM: the first large step writes a broken kernel,
// later ones correct kernels; a small step fixes a broken kernel and makes
// a correct one faster (SPEEDUP=x -> x+1); the reviser gives guidance.
func story(req Request, n int) (string, error) {
	prompt := req.Messages[len(req.Messages)-1].Content
	switch req.Purpose {
	case "large", "sample":
		if n == 0 {
			return fenced(kernel("BROKEN")), nil
		}
		return fenced(kernel(fmt.Sprintf("SPEEDUP=%.1f", 1+0.1*float64(n)))), nil
	case "refine":
		ms := markerRE.FindAllStringSubmatch(prompt, -1)
		return fenced(kernel(next(ms[len(ms)-1][1]))), nil
	case "small.revise":
		return "Fix the error first; then fuse the loads.", nil
	case "small.tune":
		m := markerRE.FindStringSubmatch(prompt)
		return edit("# "+m[1], "# "+next(m[1])), nil
	}
	return "", fmt.Errorf("unexpected purpose %q", req.Purpose)
}

// next is the marker a revision turns m into.
func next(m string) string {
	switch m {
	case "BROKEN":
		return "SPEEDUP=1.5"
	case "WRONG":
		return "SPEEDUP=1.1"
	}
	x, _ := strconv.ParseFloat(strings.TrimPrefix(m, "SPEEDUP="), 64)
	return fmt.Sprintf("SPEEDUP=%.1f", x+1)
}

// treeString draws the tree depth first, one node a line, for failure
// messages.
func treeString(nodes []Node) string {
	var b strings.Builder
	var walk func(parent int)
	walk = func(parent int) {
		for _, n := range nodes {
			if n.Parent != parent {
				continue
			}
			sp := "-"
			if n.Verdict.Speedup != nil {
				sp = fmt.Sprintf("%.2f", *n.Verdict.Speedup)
			}
			fmt.Fprintf(&b, "%s%d %s %s sp=%s r=%.3f visits=%d dup=%v\n", strings.Repeat("  ", n.Depth-1),
				n.ID, n.Action, n.Verdict.Status, sp, n.Reward, n.Visits, n.Duplicate)
			walk(n.ID)
		}
	}
	walk(0)
	return b.String()
}

// plain is a kernel with no tunable launch parameter.
func plain(marker string) string {
	return "import torch\nimport triton\n# " + marker + "\nclass ModelNew(torch.nn.Module):\n    pass\n"
}
