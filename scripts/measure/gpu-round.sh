#!/usr/bin/env bash
# One device call, a PHASE at a time, this tree (bin/kernelgate) against a baseline build
# (bin/kg-base) where a phase compares them. Builds nothing: carry the binaries (stripped and
# gzipped, two fit the 64 MiB a call carries) and unpack them into bin/ first. Writes under
# $OUT (a call returns at most 8 files: run one phase per call); prints a short table last.
#   PHASE=suite    every suite through `tasks check` on the GPU (references, solutions,
#                  speedups), then the harness's GPU tests: hack fixtures, solutions, the
#                  zygote, the in-process evaluator
#   PHASE=tests+redteam  the suite's harness tests (no tasks check: SKIP_CHECK), then redteam
#   PHASE=redteam  kernelgate redteam over level2 and heavy (SUITES, SEEDS, RT_LIMIT)
#   PHASE=l2       level2 bench, evals/s: base, this tree, base again (h200-l2compare.sh)
#   PHASE=latency  level2 one reward at a time through `serve` (one_at_a_time.py), then a
#                  20-step search with the scripted LLM, wall time: base, then this tree
#   PHASE=suite+latency  both in one call (device starts are scarce); keeps the 8 files
#                  that matter under $OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
python3 scripts/measure/check_binary.py || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,memory.used --format=csv,noheader | tee "$out/smi.txt"

phase=${PHASE:?set PHASE}
if [ "$phase" = tests+redteam ]; then
  # The harness's GPU tests, then the red team (device time is scarce: one call)
  SKIP_CHECK=1 PHASE=suite bash "$0"; PHASE=redteam bash "$0"
  exit 0
fi
if [ "$phase" = suite+latency ]; then
  PHASE=suite bash "$0"; PER_TASK=${PER_TASK:-1} PHASE=latency bash "$0"
  # a call returns at most 8 files: drop the least telling first
  for f in llm.log best-base.py best-new.py serve-base.log serve-new.log search-base.log search-new.log check.err smi.txt; do
    [ "$(ls "$out" | wc -l)" -le 8 ] && break; rm -f "$out/$f"
  done
  exit 0
fi
case $phase in
suite)
  if [ -z "${SKIP_CHECK:-}" ]; then
    t0=$(date +%s)
    timeout 200 bin/kernelgate tasks check datasets/ > "$out/check.txt" 2> "$out/check.err"
    echo "tasks check rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "REJECTED" "$out/check.txt" | cut -c1-200; tail -2 "$out/check.txt"
  fi
  t0=$(date +%s)
  # The hack fixtures run apart: one of them fills the GPU up to its child's cap, and each
  # pytest worker's zygote sizes that cap as if it had the GPU to itself, so a test beside
  # it that expects `correct` would find the GPU full.
  (cd harness/py && export KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1
   t="timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=line -rf"
   $t -n 6 tests/test_hacks.py; a=$?
   $t -n 6 tests/test_solutions.py tests/test_zygote.py tests/test_gpulock.py tests/test_precision.py \
      tests/test_same_storage.py; b=$?
   $t tests/test_eval_gpu.py; c=$?; exit $(( a || b || c ))) > "$out/pytest-gpu.log" 2>&1
  echo "pytest rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | cut -c1-300 | tail -24
  ls -d /tmp/kgz-* 2>/dev/null | wc -l | sed 's/^/kgz dirs left: /'
  ;;
redteam)
  # kernelgate redteam over the GPU suites (docs/redteam.md): JSON per suite, a table last.
  for suite in ${SUITES:-level2 heavy}; do
    t0=$(date +%s)
    timeout ${RT_LIMIT:-270} bin/kernelgate redteam --tasks datasets/$suite --solutions datasets/solutions/$suite \
      --seeds ${SEEDS:-3} --json --out "$out/miss-$suite" > "$out/redteam-$suite.json" 2> "$out/redteam-$suite.err"
    echo "redteam $suite rc=$? in $(( $(date +%s) - t0 )) s"
  done
  python3 scripts/measure/redteam_table.py "$out"/redteam-*.json
  ;;
l2)
  RUNS="base=bin/kg-base new=bin/kernelgate base2=bin/kg-base" REPEAT=${REPEAT:-5} LIMIT=${LIMIT:-170} \
    bash scripts/measure/h200-l2compare.sh
  ;;
latency)
  python3 scripts/scripted_llm.py --port 8001 --kernel scripts/data/untuned_leaky_relu.py 2> "$out/llm.log" &
  llm=$!
  trap 'kill $llm 2>/dev/null' EXIT
  port=18080
  for tag in base new; do
    kg=bin/kernelgate; [ $tag = base ] && kg=bin/kg-base
    d=$(mktemp -d)
    "$kg" serve --addr 127.0.0.1:$port --data "$d" --open > "$out/serve-$tag.log" 2>&1 &
    sp=$!
    for _ in $(seq 120); do curl -sf localhost:$port/readyz > /dev/null && break; sleep 0.5; done
    timeout 200 python3 scripts/measure/one_at_a_time.py --url http://127.0.0.1:$port --suite level2 \
      --per-task ${PER_TASK:-2} --pause 0.3 --tag "level2 one at a time, $tag" --json "$out/one-$tag.json" \
      | tee -a "$out/summary.txt"
    kill $sp; wait $sp 2>/dev/null; rm -rf "$d"
    t0=$(date +%s%N)
    timeout 150 "$kg" search --task datasets/level1/1_leaky_relu.py --steps 20 --seed 1 \
      --llm-url http://127.0.0.1:8001/v1 --model scripted --data "$out/search-$tag" --out "$out/best-$tag.py" \
      --json --log-level info > "$out/search-$tag.json" 2> "$out/search-$tag.log"
    rc=$?
    echo "search 20 steps, $tag: rc=$rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$out/summary.txt"
    rm -rf "$out/search-$tag"
  done
  echo; cat "$out/summary.txt"
  ;;
esac
