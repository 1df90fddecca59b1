#!/usr/bin/env bash
# On an H200: `kernelgate search` against a scripted OpenAI-compatible server
# (scripts/scripted_llm.py) that always proposes an honest but untuned kernel
# (scripts/data/untuned_leaky_relu.py: BLOCK 128, one warp). Measures the search's own
# overhead per step (step_ms - llm_ms - eval_ms, from the step log lines) and whether the
# token-free `tune` action finds a faster kernel. Builds nothing: carry bin/kernelgate.
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's.
python3 scripts/measure/check_binary.py || exit 2
cd "$(dirname "$0")/../.."
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3}
OUT=${OUT:-/tmp/kg-out}
mkdir -p "$OUT"
python3 scripts/scripted_llm.py --port 8001 --kernel scripts/data/untuned_leaky_relu.py 2> "$OUT/llm.log" &
llm=$!
trap 'kill $llm 2>/dev/null' EXIT
sleep 1
t0=$(date +%s)
bin/kernelgate search --task datasets/level1/1_leaky_relu.py --steps "${STEPS:-16}" --seed 1 \
  --llm-url http://127.0.0.1:8001/v1 --model scripted --data "$OUT/data" --out "$OUT/best.py" \
  --json --log-level info > "$OUT/search.json" 2> "$OUT/search.log"
echo "search rc=$? in $(( $(date +%s) - t0 )) s"
python3 scripts/measure/summarize_search.py "$OUT/search.log" "$OUT/search.json"
