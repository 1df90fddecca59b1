#!/usr/bin/env bash
# GRPO-shaped load on a lent H200: `kernelgate serve` and scripts/measure/grpo_bench.py,
# groups of GROUP completions for the first TASKS heavy tasks, once per SHARE setting
# ("off on": reference sharing off, then on, in one call); L2=1 adds a level2 bench per
# setting; STAGGER=S sends the groups in order, S s apart (scripts/measure/grpo_bench.py). Builds
# nothing (bin/kernelgate is carried; KG=another/build with TAG=-name runs that one, its
# files named with the tag, to compare two commits in one call; OPEN=0 for a build
# without --open). Logs and JSON under $OUT; a stage table last.
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's (KG=: another build, on purpose).
[ -n "${KG:-}" ] || python3 scripts/measure/check_binary.py || exit 2
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
suite=${SUITE:-heavy}; group=${GROUP:-16}; tasks=${TASKS:-8}; limit=${LIMIT:-280}
kg=${KG:-bin/kernelgate}   # another build to compare in one call
tag=${TAG:-}
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader > "$out/smi.txt"
# MEMPOLL=1: the GPU's and each process's device memory every 0.5 s (scripts/measure/mem_peaks.py),
# and the zygote's admission events (scripts/measure/admission_trace.py).
if [ "${MEMPOLL:-0}" = 1 ]; then
  (while :; do t=$(date +%s.%N)
     echo "$t $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)" >> "$out/mem.txt"
     nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | sed "s/^/$t /" >> "$out/apps.txt"
     sleep 0.5; done) & poller=$!
fi
for share in ${SHARE:-off}; do
  data=$(mktemp -d); port=$((18080 + RANDOM % 1000))
  [ "${MEMPOLL:-0}" = 1 ] && export KERNELGATE_ADMISSION_LOG="$out/admission-$share$tag.jsonl"
  # OPEN=0: a build from before API keys (77d0a47, an old baseline) has no --open and needs none.
  KERNELGATE_SHARE_REFERENCE=$share "$kg" serve --log-level "${LOGLEVEL:-info}" --addr 127.0.0.1:$port --data "$data" \
      $([ "${OPEN:-1}" = 1 ] && echo --open) \
      > "$out/serve-$share$tag.log" 2>&1 &
  pid=$!
  for _ in $(seq 120); do curl -sf "127.0.0.1:$port/healthz" > /dev/null && break; sleep 0.5; done
  timeout "$limit" python3 scripts/measure/grpo_bench.py --url "http://127.0.0.1:$port" --suite "$suite" \
      --group "$group" --tasks "$tasks" --stagger "${STAGGER:-0}" --json "$out/grpo-$share$tag.json" > "$out/grpo-$share$tag.txt" 2>&1
  echo "grpo $share$tag rc=$?"; tail -4 "$out/grpo-$share$tag.txt"
  kill -TERM $pid; wait $pid; echo "serve exit=$?"
done
unset KERNELGATE_ADMISSION_LOG
# level2 (small tasks) with the same settings: REPEAT rounds of its 20 solutions.
if [ "${L2:-0}" = 1 ]; then
  for share in ${SHARE:-off}; do
    KERNELGATE_SHARE_REFERENCE=$share timeout 150 "$kg" bench --tasks datasets/level2 \
        --kernels datasets/solutions/level2 --repeat "${REPEAT:-5}" --json > "$out/l2-$share$tag.json" 2> "$out/l2-$share$tag.err"
    echo "level2 $share$tag rc=$? $(python3 -c "import json;b=json.load(open('$out/l2-$share$tag.json'));print(b['evals'], 'evals', '%.3f evals/s' % b['evals_per_s'], b['statuses'])" 2>&1 | tail -1)"
  done
fi
# A run's report, or the groups that landed where it was cut short.
reports=(); for p in "$out"/grpo-*.json.partial; do [ -e "$p" ] || continue
  if [ -e "${p%.partial}" ]; then reports+=("${p%.partial}"); else reports+=("$p"); fi; done
python3 scripts/measure/summarize_grpo.py "${reports[@]}"
if [ "${MEMPOLL:-0}" = 1 ]; then
  kill "$poller"; python3 scripts/measure/mem_peaks.py "$out"
  for f in "$out"/admission-*.jsonl; do [ -e "$f" ] && python3 scripts/measure/admission_trace.py "$out" --log "$f"; done
fi
