#!/usr/bin/env bash
# The harness's tests in SHARDS plain pytest processes at once (default: one per core),
# each a share of the test files, round robin. Not pytest-xdist: many tests fork a
# judge from the test process, and an xdist worker's own threads make such a fork
# deadlock-prone (a runner hung on a lock its parent's other thread held).
# PYTHON is the interpreter; arguments go to every pytest.
set -uo pipefail
cd "$(dirname "$0")"
py=${PYTHON:-python3}
n=${SHARDS:-$(nproc)}
files=(tests/test_*.py)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
for ((i = 0; i < n; i++)); do
  shard=()
  for ((j = i; j < ${#files[@]}; j += n)); do shard+=("${files[j]}"); done
  [ ${#shard[@]} -gt 0 ] || continue
  "$py" -m pytest -q -p no:cacheprovider --basetemp="$work/tmp$i" "$@" "${shard[@]}" > "$work/$i.log" 2>&1 &
  pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do
  if wait "${pids[i]}"; then
    echo "shard $((i + 1))/${#pids[@]}: $(tail -n 1 "$work/$i.log")"
  else
    rc=1
    echo "shard $((i + 1))/${#pids[@]} FAILED:"
    cat "$work/$i.log"
  fi
done
exit $rc
