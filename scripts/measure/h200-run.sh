#!/usr/bin/env bash
# One device call on a lent H200 (README "Measurements"). Builds nothing: bin/kernelgate
# is built on the dev machine and carried. Logs go under $OUT; a short table prints last.
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's.
python3 scripts/measure/check_binary.py || exit 2
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
repeat=${REPEAT:-10}

nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader > "$out/smi-before.txt"
bin/kernelgate doctor --json > "$out/doctor.json" 2> "$out/doctor.err"; echo "doctor rc=$?"

timeout 190 bin/kernelgate bench --tasks datasets/level2 --kernels datasets/solutions/level2 \
    --repeat "$repeat" --json > "$out/bench.json" 2> "$out/bench.err"; echo "bench rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader > "$out/smi-after.txt"

# The GPU suite: hack fixtures, solutions, the evaluator's GPU tests, the zygote's GPU smoke test.
# test_eval_gpu runs the evaluator in-process, so it gets a process of its own.
(cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 110 python3 -m pytest -q -n 6 \
    -p no:cacheprovider --tb=short tests/test_hacks.py tests/test_solutions.py tests/test_zygote.py tests/test_gpulock.py \
    && timeout 60 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_eval_gpu.py) \
    > "$out/pytest-gpu.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -12
tail -3 "$out/bench.err"; head -c 600 "$out/doctor.err"
python3 scripts/measure/summarize_bench.py "$out/bench.json" "$out/doctor.json" | tee "$out/summary.txt"
