#!/usr/bin/env bash
# Scaling over the GPUs of one host, one device call on nvidia-h200-x2. SUITE's
# (level2) solutions, N completions per task, through `kernelgate serve`:
#   one1   one process, GPU 0 only                    (serve --device 0)
#   one2   one process on both GPUs                   (serve, every GPU)
#   wrk1   a gateway with --workers 0 and one worker   (worker --device 0)
#   wrk2   the same gateway with two workers, one per GPU
# Each config's stage medians (reference_cuda is the runner's CUDA context) say where time
# goes. Builds nothing (bin/kernelgate is carried). Results under $OUT; a table last.
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's.
python3 scripts/measure/check_binary.py || exit 2
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
n=${N:-10}; configs=${CONFIGS:-one1 one2 wrk1 wrk2}; suite=${SUITE:-level2}
read -r dev0 dev1 <<< "${DEVS:-0 1}"   # DEVS="cpu cpu" tries the script on a machine without GPUs
nvidia-smi --query-gpu=index,name,driver_version,memory.used --format=csv,noheader 2>&1 | tee "$out/smi.txt"
nproc | tee "$out/nproc.txt"

ready() {  # port
    for _ in $(seq 240); do curl -sf "127.0.0.1:$1/readyz" > /dev/null && return 0; sleep 0.5; done
    return 1
}

run_config() {  # name
    local name=$1 data port nport pids=()
    data=$(mktemp -d); port=$((18080 + RANDOM % 1000)); nport=$((14222 + RANDOM % 1000))
    case $name in
        one1) bin/kernelgate serve --addr 127.0.0.1:$port --data "$data" --open --device "$dev0" > "$out/serve-$name.log" 2>&1 & pids+=($!) ;;
        one2) bin/kernelgate serve --addr 127.0.0.1:$port --data "$data" --open > "$out/serve-$name.log" 2>&1 & pids+=($!) ;;
        wrk1|wrk2)
            bin/kernelgate serve --addr 127.0.0.1:$port --data "$data" --open --workers 0 \
                --nats-listen 127.0.0.1:$nport > "$out/serve-$name.log" 2>&1 & pids+=($!)
            sleep 2
            local devs="$dev0"; [ "$name" = wrk2 ] && devs="$dev0 $dev1"
            for d in $devs; do
                bin/kernelgate worker --nats "nats://127.0.0.1:$nport" --device "$d" \
                    > "$out/worker-$name-$d.log" 2>&1 & pids+=($!)
            done ;;
    esac
    if ready "$port"; then
        timeout 240 python3 scripts/measure/suite_batch.py --url "http://127.0.0.1:$port" --tasks "datasets/$suite" \
            --kernels "datasets/solutions/$suite" --n "$n" --out "$out/$name.json" > "$out/$name.txt" 2>&1
        echo "$name rc=$? $(tail -c 300 "$out/$name.txt")"
    else
        echo "$name: not ready"; tail -5 "$out/serve-$name.log"
    fi
    for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null; wait "${pids[$i]}" 2>/dev/null; done
    rm -rf "$data"
}

for c in $configs; do run_config "$c"; done
python3 - "$out" $configs <<'PY'
import json, os, sys
o, names = sys.argv[1], sys.argv[2:]
rep = {n: json.load(open(f"{o}/{n}.json")) for n in names if os.path.exists(f"{o}/{n}.json")}
cols = ("reference", "reference_cuda", "candidate_cuda", "load", "correctness", "lock_wait", "timing", "total")
print(f"{'config':7} {'evals':>5} {'evals/s':>8} " + " ".join(f"{c[:10]:>10}" for c in cols) + "  statuses / per GPU")
for n, r in rep.items():
    m = r["stage_median_ms"]
    print(f"{n:7} {r['n']:>5} {r['evals_per_s']:>8.3f} " + " ".join(f"{m.get(c, float('nan')):>10.0f}" for c in cols)
          + f"  {r['statuses']} {r['per_gpu']}")
for a, b in (("one1", "one2"), ("wrk1", "wrk2"), ("one1", "wrk2")):
    if a in rep and b in rep:
        print(f"{b} / {a}: {rep[b]['evals_per_s'] / rep[a]['evals_per_s']:.2f}x")
PY
