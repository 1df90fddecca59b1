#!/usr/bin/env bash
# One device call: `kernelgate bench` over the level-2 suite at several per-GPU
# concurrencies, with host CPU busy share (from /proc/stat) and GPU utilisation sampled
# during each run, to find which resource bounds throughput. Builds nothing.
# usage: CONCS="16 24 32" REPEAT=10 [BENCH_FLAGS="--timing-budget-ms 100"] bash scripts/measure/h200-concurrency.sh
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's.
python3 scripts/measure/check_binary.py || exit 2
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
cpu() { awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat; }   # busy idle jiffies
for c in ${CONCS:-16 24 32}; do
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 250 > "$out/gpu-util-$c.txt" &
    smi=$!
    read -r b0 i0 < <(cpu)
    KERNELGATE_CONCURRENCY=$c timeout 170 bin/kernelgate bench --tasks datasets/level2 \
        --kernels datasets/solutions/level2 --repeat "${REPEAT:-10}" ${BENCH_FLAGS:-} --json \
        > "$out/bench-$c.json" 2> "$out/bench-$c.err"
    rc=$?
    read -r b1 i1 < <(cpu)
    kill $smi 2>/dev/null
    echo "conc=$c rc=$rc cpu_busy=$(( 100 * (b1 - b0) / (b1 - b0 + i1 - i0) ))%"
done
python3 scripts/measure/summarize_concurrency.py "$out" ${CONCS:-16 24 32}
