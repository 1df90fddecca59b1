#!/usr/bin/env bash
# One device call: the gateway against `kernelgate bench` on the same kernels (its H200 figures), on every GPU of the host, plus a bench on GPU 0 alone for scaling.
# Builds nothing. usage: TASK=2_gemm_gelu N=512 N1=192 bash scripts/measure/h200-gateway.sh
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's.
python3 scripts/measure/check_binary.py || exit 2
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
task=${TASK:-2_gemm_gelu}; n=${N:-512}; n1=${N1:-192}
kdir=$(mktemp -d); cp "datasets/solutions/level2/$task.py" "$kdir/"
nvidia-smi -L | tee "$out/gpus.txt"

bench() {  # name, args...
    local name=$1; shift
    local t0=$(date +%s.%N)
    timeout 280 bin/kernelgate bench --tasks "datasets/level2/$task.py" --kernels "$kdir" --json "$@" \
        > "$out/bench-$name.json" 2> "$out/bench-$name.err"
    echo "bench $name rc=$? $(python3 -c "import json;b=json.load(open('$out/bench-$name.json'));print('evals', b['evals'], 'evals/s %.2f'%b['evals_per_s'], 'p50 %.0f ms'%b['latency_p50_ms'], b['statuses'])")"
}
bench all --repeat "$n"
bench gpu0 --repeat "$n1" --device 0

data=$(mktemp -d)
bin/kernelgate serve --addr 127.0.0.1:8080 --data "$data" --open > "$out/serve.log" 2>&1 &
pid=$!
timeout 300 python3 scripts/measure/gateway_batch.py --task "datasets/level2/$task.py" \
    --kernel "datasets/solutions/level2/$task.py" --n "$n" --out "$out/gateway.json"
echo "gateway rc=$?"
kill -TERM $pid; wait $pid; echo "serve exit=$?"
ls -R "$data/parquet" | tail -3
python3 - "$out" <<'PY'
import json, sys
o = sys.argv[1]
b = json.load(open(f"{o}/bench-all.json")); g = json.load(open(f"{o}/gateway.json"))
b0 = json.load(open(f"{o}/bench-gpu0.json"))
print(f"bench, all GPUs:  {b['evals']} evals  {b['evals_per_s']:.2f} evals/s")
print(f"bench, GPU 0:     {b0['evals']} evals  {b0['evals_per_s']:.2f} evals/s  -> scaling {b['evals_per_s'] / b0['evals_per_s']:.2f}x")
print(f"gateway batch:    {g['n']} evals  {g['evals_per_s']:.2f} evals/s  = {100 * g['evals_per_s'] / b['evals_per_s']:.0f}% of bench; "
      f"statuses {g['statuses']}; per GPU {g['per_gpu']}; speedup median {g['speedup_median']}")
PY
