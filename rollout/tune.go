package rollout

import (
	"math/rand/v2"
	"regexp"
	"strconv"
)

// tuneSite is one integer literal assigned to a launch parameter.
type tuneSite struct {
	start, end int // the literal's byte range in the code
	name       string
	value      int
}

// tuneRE finds launch parameters set to integer literals, in the forms
// kernels use: keyword arguments (num_warps=4), constexpr defaults
// (BLOCK: tl.constexpr = 128), assignments (BLOCK_SIZE = 256) and dict
// entries ('BLOCK_M': 64 in a triton.Config, or dict(BM=128)). A comparison
// (BLOCK == 128) does not match: the literal must follow one '='.
var tuneRE = regexp.MustCompile(`\b(BLOCK\w*|B[MNK]|num_warps|num_stages)\b(['"]?)(\s*:\s*tl\.constexpr)?\s*(=|:)\s*(\d+)\b`)

func findTuneSites(code string) []tuneSite {
	var out []tuneSite
	for _, m := range tuneRE.FindAllStringSubmatchIndex(code, -1) {
		name := code[m[2]:m[3]]
		quoted := m[5] > m[4]
		op := code[m[8]:m[9]]
		if op == ":" && !quoted {
			continue // "BLOCK: 128" outside a dict is an annotation, not a value
		}
		if m[9] < len(code) && code[m[9]] == '=' {
			continue // "==" is a comparison
		}
		v, err := strconv.Atoi(code[m[10]:m[11]])
		if err != nil {
			continue
		}
		if lo, hi := tuneBounds(name); v < lo || v > hi {
			continue // out of the sane range: leave it alone
		}
		out = append(out, tuneSite{start: m[10], end: m[11], name: name, value: v})
	}
	return out
}

// tuneBounds are the sane ranges: BLOCK 16..1024, warps 1..16, stages 1..6.
func tuneBounds(name string) (lo, hi int) {
	switch name {
	case "num_warps":
		return 1, 16
	case "num_stages":
		return 1, 6
	}
	return 16, 1024
}

// neighbour moves v one step up (or down): to the next power of two for
// blocks and warps, by one for stages (pipelining depth is not a power of
// two). It reports false when the move leaves the sane range.
func neighbour(name string, v int, up bool) (int, bool) {
	lo, hi := tuneBounds(name)
	var w int
	switch {
	case name == "num_stages" && up:
		w = v + 1
	case name == "num_stages":
		w = v - 1
	case up:
		w = 1
		for w <= v {
			w *= 2
		}
	default:
		w = 1
		for w*2 < v {
			w *= 2
		}
		if w >= v {
			return 0, false
		}
	}
	return w, w >= lo && w <= hi && w != v
}

// tuneCode moves one or two launch parameters of code to a neighbouring
// value, chosen by rng (so a seeded search is reproducible). It returns
// false when nothing in code is tunable.
func tuneCode(code string, rng *rand.Rand) (string, []string, bool) {
	sites := findTuneSites(code)
	rng.Shuffle(len(sites), func(i, j int) { sites[i], sites[j] = sites[j], sites[i] })
	want := 1 + rng.IntN(2)
	type change struct {
		site tuneSite
		to   int
	}
	var changes []change
	for _, s := range sites {
		if len(changes) == want {
			break
		}
		up := rng.IntN(2) == 0
		to, ok := neighbour(s.name, s.value, up)
		if !ok {
			to, ok = neighbour(s.name, s.value, !up)
		}
		if ok {
			changes = append(changes, change{s, to})
		}
	}
	if len(changes) == 0 {
		return code, nil, false
	}
	// Apply from the end so earlier byte offsets stay valid.
	for i := 1; i < len(changes); i++ {
		for j := i; j > 0 && changes[j].site.start > changes[j-1].site.start; j-- {
			changes[j], changes[j-1] = changes[j-1], changes[j]
		}
	}
	var what []string
	for _, c := range changes {
		code = code[:c.site.start] + strconv.Itoa(c.to) + code[c.site.end:]
		what = append(what, c.site.name+": "+strconv.Itoa(c.site.value)+" -> "+strconv.Itoa(c.to))
	}
	return code, what, true
}
