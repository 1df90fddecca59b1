#!/usr/bin/env bash
# On an H200: every suite through `tasks check` (reference times, solutions
# evaluated and their speedups), a GPU-size synthetic suite, then the harness's GPU
# tests. Builds nothing: carry bin/kernelgate. Writes under $OUT. EXACT=1 instead checks
# every suite without solutions and prints how far each reference is from its exact answer
# (the check's float64 pass; scripts/measure/exactness_table.py), then stops.
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's.
python3 scripts/measure/check_binary.py || exit 2
cd "$(dirname "$0")/../.."
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3}
OUT=${OUT:-/tmp/kg-out}
mkdir -p "$OUT"
if [ "${EXACT:-0}" = 1 ]; then
  t0=$(date +%s)
  bin/kernelgate tasks check datasets/ --solutions=false --json > "$OUT/exact.json" 2> "$OUT/exact.err"
  echo "exactness check rc=$? in $(( $(date +%s) - t0 )) s"
  python3 scripts/measure/exactness_table.py "$OUT/exact.json" | tee "$OUT/exact.txt" | tail -25
  exit 0
fi
bin/kernelgate doctor > "$OUT/doctor.txt" 2>&1
cp datasets/manifest.json "$OUT/manifest.json" 2>/dev/null || true
t0=$(date +%s)
bin/kernelgate tasks check datasets/ --manifest "$OUT/manifest.json" > "$OUT/check.txt" 2> "$OUT/check.err"
echo "check rc=$? in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/check.txt"
bin/kernelgate tasks synth --n 24 --seed 7 --size gpu --out "$OUT/synth" --quiet
t0=$(date +%s)
bin/kernelgate tasks check "$OUT/synth" --json > "$OUT/synth_check.json" 2> "$OUT/synth_check.err"
echo "synth check rc=$? in $(( $(date +%s) - t0 )) s" | tee "$OUT/synth_check.txt"
if [ "${SKIP_PYTEST:-0}" != 1 ]; then
  # Both runs, whatever the first gives: a failure there once hid the second's results.
  (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 200 python3 -m pytest -q -n 6 -p no:cacheprovider --tb=short tests/test_hacks.py tests/test_solutions.py tests/test_zygote.py tests/test_gpulock.py tests/test_precision.py; a=$?; timeout 90 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_eval_gpu.py; b=$?; exit $(( a || b ))) > "$OUT/pytest.txt" 2>&1
  pytest_rc=$?
  echo "pytest rc=$pytest_rc" >> "$OUT/pytest.txt"
  grep -E "^FAILED|^ERROR|passed|failed" "$OUT/pytest.txt" | cut -c1-200
  [ "$pytest_rc" = 0 ] || echo "GPU TESTS FAILED (rc $pytest_rc): see $OUT/pytest.txt"
fi
grep -E "REJECTED" "$OUT/check.txt" | cut -c1-200
tail -2 "$OUT/check.txt"
python3 - "$OUT/synth_check.json" <<'PY'
import json, sys
rs = json.load(open(sys.argv[1]))
refs = sorted(r["verdict"]["ref_runtime"]["median_ms"] for r in rs if r["verdict"].get("ref_runtime"))
bad = [r["id"] + ": " + "; ".join(r["problems"]) for r in rs if r["problems"]]
print(f"synth: {len(rs)} tasks, {len(bad)} rejected; ref ms min/median/max "
      f"{refs[0] if refs else None}/{refs[len(refs)//2] if refs else None}/{refs[-1] if refs else None}")
for b in bad: print("  " + b[:200])
PY
exit "${pytest_rc:-0}"
