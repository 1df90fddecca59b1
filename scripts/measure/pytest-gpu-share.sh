#!/usr/bin/env bash
# The harness's GPU tests that expect `correct` (solutions, zygote, lock, precision, storage)
# with N pytest workers, each its own zygote on the one GPU, for this tree and for a baseline
# tree (BASE_TGZ: `git archive REV harness/py harness/testdata datasets | gzip`), while
# nvidia-smi samples the GPU's memory each second. RUNS: TAG=TREE:N ... (TREE new or base).
# Builds nothing; prints a table last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
root=$PWD
if [ -n "${BASE_TGZ:-}" ]; then mkdir -p /tmp/kg-base-tree && tar -xzf "$BASE_TGZ" -C /tmp/kg-base-tree; fi
tests="tests/test_solutions.py tests/test_zygote.py tests/test_gpulock.py tests/test_precision.py tests/test_same_storage.py"
for run in ${RUNS:?set RUNS}; do
  tag=${run%%=*}; spec=${run#*=}; tree=${spec%%:*}; n=${spec#*:}
  dir=$root; [ "$tree" = base ] && dir=/tmp/kg-base-tree
  (while :; do echo "$(date +%s) $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits) \
$(nvidia-smi --query-compute-apps=used_memory --format=csv,noheader,nounits | awk '{s+=$1; c++} END {print c+0, s+0}')"; sleep 1; done) > "$out/mem-$tag.txt" &
  smp=$!
  t0=$(date +%s)
  (cd "$dir/harness/py" && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout "${LIMIT:-200}" python3 -m pytest -q -n "$n" \
     -p no:cacheprovider --tb=line -rf $tests) > "$out/pytest-$tag.log" 2>&1
  rc=$?; kill $smp
  res=$(grep -E "passed|failed" "$out/pytest-$tag.log" | tail -1)
  peak=$(awk '{if ($2>m) m=$2; if ($3>p) p=$3} END {print m " MiB used, " p " processes"}' "$out/mem-$tag.txt")
  reasons=$(grep -oE "'(the [a-z]+ ran out of GPU memory|task error|internal harness error)[^']{0,60}" "$out/pytest-$tag.log" | cut -c1-70 | sort | uniq -c | sort -rn | head -3 | tr '\n' ';')
  printf '%-8s rc=%s %4ss  %s | peak %s | %s\n' "$tag" "$rc" "$(( $(date +%s) - t0 ))" "$res" "$peak" "$reasons" | tee -a "$out/table.txt"
done
echo; cat "$out/table.txt"
