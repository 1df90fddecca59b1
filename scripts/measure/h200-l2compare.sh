#!/usr/bin/env bash
# level2 throughput of several builds or settings in one device call ("level2 does not regress"): RUNS is a list of TAG=BINARY[,VAR=VALUE...] run in that order, e.g.
#   RUNS="on=bin/kernelgate base=bin/kg-base off=bin/kernelgate,KERNELGATE_SHARED_LAUNCHERS=off on2=bin/kernelgate"
# TASKS_DIR and KERNELS_DIR name another suite. Builds nothing. One JSON per run under $OUT and a line each: evals/s, statuses, median
# stages, launchers built and found ready. REPEAT rounds of the 20 solutions (default 5).
set -uo pipefail
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
for run in ${RUNS:?set RUNS}; do
  tag=${run%%=*}; rest=${run#*=}; kg=${rest%%,*}; vars=""
  [ "$rest" != "$kg" ] && vars=$(echo "${rest#*,}" | tr ',' ' ')
  env $vars KERNELGATE_SHARE_REFERENCE=on timeout "${LIMIT:-150}" "$kg" bench --log-level info --tasks "${TASKS_DIR:-datasets/level2}" \
      --kernels "${KERNELS_DIR:-datasets/solutions/level2}" --repeat "${REPEAT:-5}" --json > "$out/l2-$tag.json" 2> "$out/l2-$tag.err"
  echo "level2 $tag rc=$? $(python3 - "$out/l2-$tag.json" <<'PY'
import json, statistics as st, sys
try:
    b = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(print("no report (cut short: see the .err file)"))
rows = [r for r in b["rows"] if r.get("stage_ms")]
med = lambda k: round(st.median([r["stage_ms"].get(k, 0) for r in rows])) if rows else "-"
tot = lambda k: sum(r["stage_ms"].get(k, 0) for r in rows)
print(b["evals"], "evals", "%.3f evals/s" % b["evals_per_s"], b["statuses"], "median ms: precompile", med("precompile"),
      "total", med("total"), "lock_frozen", med("lock_frozen"), "cpu_candidate", med("cpu_candidate"),
      "| launchers built", tot("precompile_launchers"), "found", tot("precompile_launchers_found"))
PY
)"
  grep -h 'shared launchers:' "$out/l2-$tag.err" | tail -1 | sed 's/.*msg="//; s/" component.*//'
done
