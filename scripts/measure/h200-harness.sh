#!/usr/bin/env bash
# The harness v2 checks on a lent H200: one device call, nothing built here
# (bin/kernelgate is carried). PHASE=smoke: probes, doctor, one evaluation, the GPU test
# suite, a short level2 bench. PHASE=measure: the README's figures (bench, fidelity on
# level2 and heavy, the heavy suite at full concurrency). Logs under $OUT; a table last.
set -uo pipefail
# The carried binary embeds the harness it runs: it must be this working tree's.
python3 scripts/measure/check_binary.py || exit 2
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
phase=${PHASE:-smoke}
kg=bin/kernelgate
nvidia-smi --query-gpu=name,driver_version,clocks.sm,memory.used --format=csv,noheader > "$out/smi.txt"

# gpu_suite LOG: the GPU test suite (hack fixtures, GPU evaluation tests, the solutions),
# four test workers, each its own zygote on the one GPU.
gpu_suite() {
  (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 150 python3 -m pytest -q -n 4 \
      -p no:cacheprovider --tb=line tests/test_hacks.py tests/test_eval_gpu.py tests/test_solutions.py) \
      > "$1" 2>&1; echo "pytest rc=$?"
}

if [ "$phase" = smoke ]; then
  timeout 60 python3 scripts/measure/gpu_probe_ipc.py ipc_uid > "$out/probe.txt" 2>&1; echo "probe rc=$?"
  timeout 60 $kg doctor --json > "$out/doctor.json" 2> "$out/doctor.err"; echo "doctor rc=$?"
  timeout 120 $kg eval --task datasets/level2/2_gemm_gelu.py --kernel datasets/solutions/level2/2_gemm_gelu.py \
      --json > "$out/eval.json" 2> "$out/eval.err"; echo "eval rc=$?"
  (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 240 python3 -m pytest -q -n 4 \
      -p no:cacheprovider --tb=short tests/test_hacks.py tests/test_eval_gpu.py tests/test_solutions.py) \
      > "$out/pytest-gpu.log" 2>&1; echo "pytest rc=$?"
  timeout 150 $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat 3 --json \
      > "$out/bench.json" 2> "$out/bench.err"; echo "bench rc=$?"
  cat "$out/probe.txt"
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
try:
    d = json.load(open(f"{out}/doctor.json")); print("doctor sandbox:", json.dumps(d.get("sandbox", d))[:400])
except Exception as e: print("doctor:", e)
try:
    v = json.load(open(f"{out}/eval.json"))
    v = v.get("verdict", v)
    print("eval:", v["status"], "speedup", v.get("speedup"), "wall", v.get("wall_check"), "mem", v.get("device_memory"),
          "sandbox", v["env"].get("sandbox"), v["env"].get("sandbox_detail"), "stages", v.get("stage_ms"), v.get("feedback", "")[:300])
except Exception as e: print("eval:", e)
try:
    b = json.load(open(f"{out}/bench.json")); print("bench: evals/s", b.get("evals_per_s"), "statuses", b.get("statuses"))
except Exception as e: print("bench:", e)
PY
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -25
fi

if [ "$phase" = scale ]; then
  timeout 120 python3 scripts/measure/gpu_probe_ipc.py contexts > "$out/contexts.txt" 2>&1; echo "contexts rc=$?"
  for c in 4 8 16; do
    timeout 110 $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat 2 --concurrency $c --json \
        > "$out/bench-c$c.json" 2> "$out/bench-c$c.err"; echo "bench c$c rc=$?"
  done
  cat "$out/contexts.txt"
  python3 - "$out" <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
for c in (4, 8, 16):
    try:
        b = json.load(open(f"{out}/bench-c{c}.json"))
    except Exception as e:
        print(c, e); continue
    rows = b["rows"]
    med = lambda k: st.median([r["stage_ms"].get(k, 0) for r in rows])
    print(f"c={c}: {b['evals_per_s']:.2f} evals/s {b['statuses']} latency p50 {b['latency_p50_ms']:.0f} ms; "
          f"admission {med('admission'):.0f} load {med('load'):.0f} correctness {med('correctness'):.0f} "
          f"first_call {med('first_call'):.0f} timing {med('timing'):.0f}")
    flags = [r["feedback"][:120] for r in rows if r["status"] != "correct"][:3]
    print("   ", flags)
PY
fi

if [ "$phase" = measure ]; then
  (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 170 python3 -m pytest -q -n 4 \
      -p no:cacheprovider --tb=line tests/test_hacks.py tests/test_eval_gpu.py tests/test_solutions.py) \
      > "$out/pytest-gpu.log" 2>&1; echo "pytest rc=$?"
  timeout 170 $kg bench --fidelity --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat 1 --json \
      > "$out/fidelity-level2.json" 2> "$out/fidelity-level2.err"; echo "fidelity rc=$?"
  timeout 130 $kg tasks check datasets/heavy --manifest datasets/manifest.json \
      > "$out/heavy-check.txt" 2>&1; echo "heavy check rc=$?"
  cp datasets/manifest.json "$out/manifest.json"
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -15
  tail -25 "$out/heavy-check.txt"
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
try:
    f = json.load(open(f"{out}/fidelity-level2.json"))
    print("fidelity summary:", json.dumps(f.get("summary")))
    for p in f.get("passes") or []:
        r = p.get("report") or {}
        print(" pass", p.get("name"), "conc", p.get("concurrency"), "evals/s", round(r.get("evals_per_s") or 0, 3), r.get("statuses"))
    for k in (f.get("kernels") or [])[:20]:
        print("  ", k["task"][:28], round(k["speedup_full"], 3), round(k["speedup_c1"], 3), round(k["ratio"], 4))
    for e in (f.get("excluded") or [])[:8]:
        print("  excluded", e["task"][:28], e["reason"][:100])
except Exception as e:
    print("fidelity:", e)
PY
fi

if [ "$phase" = verify ]; then
  (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 115 python3 -m pytest -q -n 6 \
      -p no:cacheprovider --tb=line tests/test_hacks.py tests/test_solutions.py) \
      > "$out/pytest-gpu.log" 2>&1; echo "pytest rc=$?"
  timeout 105 $kg tasks check datasets/heavy --manifest datasets/manifest.json > "$out/heavy-check.txt" 2>&1
  echo "heavy check rc=$?"; cp datasets/manifest.json "$out/manifest.json"
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -12
  tail -22 "$out/heavy-check.txt"
fi

if [ "$phase" = profile ]; then
  # Where an evaluation's time goes at full concurrency (level2, REPEAT per kernel): the
  # host's CPU busy share, each process's CPU time, load phases, the wall check's spread.
  # PYTEST=1 runs the GPU test suite first.
  if [ "${PYTEST:-0}" = 1 ]; then
    (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 240 python3 -m pytest -q -n 4 \
        -p no:cacheprovider --tb=line tests/test_hacks.py tests/test_eval_gpu.py tests/test_solutions.py) \
        > "$out/pytest-gpu.log" 2>&1; echo "pytest rc=$?"
    grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -15
  fi
  python3 scripts/measure/cpu_sampler.py "$out/cpu.txt" & smp=$!
  timeout 200 $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat ${REPEAT:-2} \
      --concurrency 16 --json > "$out/bench-c16.json" 2> "$out/bench-c16.err"; echo "bench c16 rc=$?"
  kill $smp; sleep 0.5
  python3 - "$out" <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
cpu = [float(l.split()[1]) for l in open(f"{out}/cpu.txt") if l.strip()]
print(f"host CPU busy during bench: median {st.median(cpu):.2f} mean {st.mean(cpu):.2f} of 1 (n={len(cpu)})")
b = json.load(open(f"{out}/bench-c16.json"))
rows = b["rows"]
keys = sorted({k for r in rows for k in r["stage_ms"]})
print(f"c16: {b['evals_per_s']:.2f} evals/s over {len(rows)} {b['statuses']} latency p50 {b['latency_p50_ms']:.0f} ms")
print("  medians:", ", ".join(f"{k} {st.median([r['stage_ms'].get(k, 0) for r in rows]):.0f}" for k in keys))
cs = [sum(r["stage_ms"].get(k, 0) for k in ("cpu_judge", "cpu_reference", "cpu_candidate")) for r in rows]
print(f"  CPU s per eval: median {st.median(cs)/1e3:.2f}; 16 cores allow {16/(st.median(cs)/1e3):.2f} evals/s")
wc = [r["wall_check"] for r in rows if r.get("wall_check")]
if wc:
    ex = sorted(w["cand_overhead_ms"] - w["ref_overhead_ms"] for w in wc)
    print(f"  wall check (cand - ref overhead, per eval): min {ex[0]:.3f} median {st.median(ex):.3f} max {ex[-1]:.3f} ms; "
          f">0.15 ms: {sum(x > 0.15 for x in ex)}/{len(ex)}; ref overhead median "
          f"{st.median(w['ref_overhead_ms'] for w in wc):.3f} ms")
for r in rows:
    if r["status"] != "correct":
        print("  ", r["task"][:28], r["status"], r["hack_flags"], r.get("wall_check") or {}, r["feedback"][:160])
PY
fi

if [ "$phase" = final1 ]; then
  # The figures, part 1: level2 throughput (REPEAT per kernel, 16 in flight), the
  # fidelity table on level2, the heavy suite's task check.
  timeout 150 $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat ${REPEAT:-5} \
      --concurrency 16 --json > "$out/bench-c16.json" 2> "$out/bench-c16.err"; echo "bench c16 rc=$?"
  timeout 200 $kg bench --fidelity --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat 1 --json \
      > "$out/fidelity-level2.json" 2> "$out/fidelity-level2.err"; echo "fidelity rc=$?"
  timeout 150 $kg tasks check datasets/heavy --manifest datasets/manifest.json > "$out/heavy-check.txt" 2>&1
  echo "heavy check rc=$?"; cp datasets/manifest.json "$out/manifest.json"
  tail -20 "$out/heavy-check.txt"
fi

if [ "$phase" = final2 ]; then
  # Part 2: the heavy suite with its solutions at full concurrency, then at concurrency 1
  # (REPEAT evaluations of each kernel in each pass; medians compared).
  timeout 560 $kg bench --fidelity --tasks datasets/heavy --kernels datasets/solutions/heavy --repeat ${REPEAT:-1} --json \
      > "$out/fidelity-heavy.json" 2> "$out/fidelity-heavy.err"; echo "heavy fidelity rc=$?"
fi

if [ "$phase" = final1 ] || [ "$phase" = final2 ]; then
  python3 - "$out" <<'PY'
import glob, json, sys, statistics as st
out = sys.argv[1]
for f in sorted(glob.glob(f"{out}/bench-c16.json")):
    b = json.load(open(f))
    print(f"bench: {b['evals_per_s']:.2f} evals/s over {b['evals']} {b['statuses']} p50 {b['latency_p50_ms']:.0f} ms; "
          f"mem wait median {b['stage_median_ms'].get('lock_mem_wait', 0):.0f} ms")
for f in sorted(glob.glob(f"{out}/fidelity-*.json")):
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f, e); continue
    print(f.split("/")[-1], "summary:", json.dumps(d.get("summary")))
    for p in d.get("passes") or []:
        r = p.get("report") or {}
        print("  pass", p.get("name"), "conc", p.get("concurrency"), "evals/s", round(r.get("evals_per_s") or 0, 3),
              r.get("statuses"), "harness_error feedback:",
              [x["feedback"][:90] for x in r.get("rows") or [] if x.get("status") == "harness_error"][:3])
    for k in d.get("kernels") or []:
        print("   ", k["task"][:34].ljust(35), round(k["speedup_full"], 3), round(k["speedup_c1"], 3), round(k["ratio"], 4))
    for e in (d.get("excluded") or [])[:10]:
        print("    excluded", e["task"][:34], e["reason"][:110])
PY
fi

if [ "$phase" = ab ]; then
  # Level2 throughput, this build against OLD (another carried build), one run each in
  # the order new, old, new (REPEAT per kernel, 16 in flight); then the level2 fidelity table.
  i=0
  for b in "$kg" "${OLD:?}" "$kg"; do
    i=$((i+1))
    timeout 150 $b bench --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat ${REPEAT:-5} \
        --concurrency 16 --json > "$out/ab$i.json" 2> "$out/ab$i.err"; echo "bench $i ($b) rc=$?"
  done
  timeout 200 $kg bench --fidelity --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat 1 --json \
      > "$out/fidelity-level2.json" 2> "$out/fidelity-level2.err"; echo "fidelity rc=$?"
  python3 - "$out" <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
for i, name in ((1, "new"), (2, "old"), (3, "new")):
    try:
        b = json.load(open(f"{out}/ab{i}.json"))
    except Exception as e:
        print(i, name, e); continue
    rows = b["rows"]
    lat = st.mean(r["latency_ms"] for r in rows) / 1e3
    s = b["stage_median_ms"]
    print(f"{i} {name}: {b['evals_per_s']:.3f} evals/s over {b['evals']} {b['statuses']} in flight {sum(r['latency_ms'] for r in rows)/1e3/b['wall_s']:.1f}; "
          f"mean latency {lat:.2f} s; window {s.get('lock_exclusive_held', 0):.0f} ms; pairs median "
          f"{st.median([(r.get('wall_check') or {}).get('pairs', 0) for r in rows])}")
try:
    d = json.load(open(f"{out}/fidelity-level2.json"))
    print("fidelity level2:", json.dumps(d.get("summary")))
except Exception as e:
    print("fidelity:", e)
PY
fi

if [ "$phase" = long ]; then
  # Level2 throughput over a long run (REPEAT per kernel, 16 in flight): the rate a user
  # running thousands of evaluations sees, with the last ones' tail a small share of it.
  timeout 290 $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 --repeat ${REPEAT:-15} \
      --concurrency 16 --json > "$out/bench-long.json" 2> "$out/bench-long.err"; echo "bench rc=$?"
  python3 - "$out" <<'PY'
import json, sys, statistics as st
b = json.load(open(f"{sys.argv[1]}/bench-long.json"))
rows = b["rows"]
done = sorted(r["latency_ms"] for r in rows)
print(f"long: {b['evals_per_s']:.3f} evals/s over {b['evals']} in {b['wall_s']:.1f} s {b['statuses']}; in flight "
      f"{sum(done)/1e3/b['wall_s']:.1f}; latency p50 {b['latency_p50_ms']:.0f} ms; window median "
      f"{b['stage_median_ms'].get('lock_exclusive_held', 0):.0f} ms; cpu_candidate median {b['stage_median_ms'].get('cpu_candidate', 0):.0f} ms")
PY
fi

if [ "$phase" = headstart ]; then
  # Does a candidate's time depend on the evaluation? Six heavy kernels, 4 evaluations
  # each at concurrency 1, with this build and with OLD if given; then this build's level2
  # throughput (REPEAT per kernel, 16 in flight) and the heavy fidelity table.
  mkdir -p /tmp/hs/t /tmp/hs/s
  for n in 2_channel_affine_hardswish_residual_fp16 3_layernorm_bf16 4_add_rmsnorm_fp16 \
           6_log_softmax_wide_fp16 7_row_l3_norm_bf16 16_row_logsumexp_wide_fp32; do
    cp datasets/heavy/$n.py /tmp/hs/t/; cp datasets/solutions/heavy/$n.py /tmp/hs/s/
  done
  for b in "$kg" ${OLD:-}; do
    n=$(basename "$b")
    timeout 120 $b bench --tasks /tmp/hs/t --kernels /tmp/hs/s --repeat 4 --concurrency 1 --json \
        > "$out/hs-$n.json" 2> "$out/hs-$n.err"; echo "$n rc=$?"
  done
  timeout $((30 + 18 * ${REPEAT:-5})) $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 \
      --repeat ${REPEAT:-5} --concurrency 16 --json > "$out/l2.json" 2> "$out/l2.err"; echo "level2 rc=$?"
  timeout 130 $kg bench --fidelity --tasks datasets/heavy --kernels datasets/solutions/heavy --repeat 1 --json \
      > "$out/fidelity-heavy.json" 2> "$out/fidelity-heavy.err"; echo "heavy fidelity rc=$?"
  python3 - "$out" "$(basename "$kg")" ${OLD:+"$(basename "$OLD")"} <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
for b in sys.argv[2:]:
    try:
        d = json.load(open(f"{out}/hs-{b}.json"))
    except Exception as e:
        print(b, e); continue
    by = {}
    for r in d["rows"]:
        w = r.get("wall_check") or {}
        by.setdefault(r["task"][:14], []).append((r["runtime_median_ms"], w.get("head_ms"), w.get("cand_enqueue_ms")))
    for t, v in by.items():
        c = [x[0] for x in v if x[0]]
        print(b[:14].ljust(15), t.ljust(15), "cand", [round(x, 4) for x in c],
              f"spread {100 * (max(c) / min(c) - 1):.1f}%" if c else "", "head, cand enqueue", [x[1:] for x in v][:2])
try:
    b = json.load(open(f"{out}/l2.json"))
    print(f"level2: {b['evals_per_s']:.3f} evals/s over {b['evals']} {b['statuses']} window "
          f"{b['stage_median_ms'].get('lock_exclusive_held', 0):.0f} ms; head median "
          f"{st.median([(r.get('wall_check') or {}).get('head_ms') or 0 for r in b['rows']])} ms")
except Exception as e:
    print("level2", e)
try:
    d = json.load(open(f"{out}/fidelity-heavy.json"))
    print("heavy fidelity:", json.dumps(d["summary"]))
    for p in d.get("passes") or []:
        r = p.get("report") or {}
        print("  pass", p.get("name"), "conc", p.get("concurrency"), "evals/s", round(r.get("evals_per_s") or 0, 3), r.get("statuses"))
    for k in d["kernels"]:
        print("  ", k["task"][:30].ljust(31), round(k["speedup_full"], 3), round(k["speedup_c1"], 3), round(k["ratio"], 4))
except Exception as e:
    print("heavy fidelity", e)
PY
fi

if [ "$phase" = recheck ]; then
  # The GPU suite's wall-check cases one at a time, verdicts kept: the unjoined side stream
  # (3 evaluations) and an honest level1 kernel flagged once (3); then the suite again.
  for i in 1 2 3; do
    timeout 60 $kg eval --task datasets/ci/1_add_relu.py --kernel harness/testdata/hacks/side_stream_unjoined.py \
        --json > "$out/side$i.json" 2> "$out/side$i.err"
    timeout 60 $kg eval --task datasets/level1/19_row_std.py --kernel datasets/solutions/level1/19_row_std.py \
        --json > "$out/std$i.json" 2> "$out/std$i.err"
  done
  (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 170 python3 -m pytest -q -n 4 \
      -p no:cacheprovider --tb=line tests/test_hacks.py tests/test_eval_gpu.py tests/test_solutions.py) \
      > "$out/pytest-gpu.log" 2>&1; echo "pytest rc=$?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -8
  python3 - "$out" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(f"{sys.argv[1]}/side*.json") + glob.glob(f"{sys.argv[1]}/std*.json")):
    try:
        v = json.load(open(f)); v = v.get("verdict", v)
    except Exception as e:
        print(f, e); continue
    rt = v.get("runtime") or {}
    print(f.split("/")[-1], v["status"], v["hack_flags"], "cand", rt.get("median_ms"), "ref",
          (v.get("ref_runtime") or {}).get("median_ms"), "wall", v.get("wall_check"), v.get("feedback", "")[:160])
PY
fi

if [ "$phase" = v10 ]; then
  # The figures at one commit, one call: the GPU suite twice (4 test workers, each its
  # own zygote on the one GPU), level2 throughput (REPEAT per kernel, 16 in flight), heavy fidelity.
  for i in 1 2; do
    (cd harness/py && KERNELGATE_TEST_MODE=gpu KERNELGATE_TEST_GPU=1 timeout 170 python3 -m pytest -q -n 4 \
        -p no:cacheprovider --tb=line tests/test_hacks.py tests/test_eval_gpu.py tests/test_solutions.py) \
        > "$out/pytest-gpu$i.log" 2>&1; echo "pytest $i rc=$?"
  done
  timeout $((30 + 18 * ${REPEAT:-12})) $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 \
      --repeat ${REPEAT:-12} --concurrency 16 --json > "$out/l2.json" 2> "$out/l2.err"; echo "level2 rc=$?"
  timeout 150 $kg bench --fidelity --tasks datasets/heavy --kernels datasets/solutions/heavy --repeat 1 --json \
      > "$out/fidelity-heavy.json" 2> "$out/fidelity-heavy.err"; echo "heavy fidelity rc=$?"
  for i in 1 2; do grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu$i.log" | tail -6; done
  python3 - "$out" <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
try:
    b = json.load(open(f"{out}/l2.json"))
    rows = b["rows"]
    print(f"level2: {b['evals_per_s']:.3f} evals/s over {b['evals']} {b['statuses']} in flight "
          f"{sum(r['latency_ms'] for r in rows) / 1e3 / b['wall_s']:.1f}; window "
          f"{b['stage_median_ms'].get('lock_exclusive_held', 0):.0f} ms; head median "
          f"{st.median([(r.get('wall_check') or {}).get('head_ms') or 0 for r in rows])} ms")
except Exception as e:
    print("level2", e)
try:
    d = json.load(open(f"{out}/fidelity-heavy.json"))
    print("heavy fidelity:", json.dumps(d["summary"]))
    for p in d.get("passes") or []:
        r = p.get("report") or {}
        print("  pass", p.get("name"), "conc", p.get("concurrency"), "evals/s", round(r.get("evals_per_s") or 0, 3), r.get("statuses"))
    worst = sorted(d["kernels"], key=lambda k: -abs(k["ratio"] - 1))[:4]
    for k in worst:
        print("  ", k["task"][:30].ljust(31), round(k["speedup_full"], 3), round(k["speedup_c1"], 3), round(k["ratio"], 4))
except Exception as e:
    print("heavy fidelity", e)
PY
fi

if [ "$phase" = v10all ]; then
  # Every issue-10 figure at one commit, one call: the GPU suite (4 test workers), level2
  # throughput (REPEAT per kernel, 16 in flight), fidelity on heavy and level2, and the heavy
  # suite's check with its manifest entries (copied to $OUT to bring back).
  gpu_suite "$out/pytest-gpu.log"
  timeout $((20 + 10 * ${REPEAT:-12})) $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 \
      --repeat ${REPEAT:-12} --concurrency 16 --json > "$out/l2.json" 2> "$out/l2.err"; echo "level2 rc=$?"
  for s in heavy level2; do
    timeout 110 $kg bench --fidelity --tasks datasets/$s --kernels datasets/solutions/$s --repeat 1 --json \
        > "$out/fidelity-$s.json" 2> "$out/fidelity-$s.err"; echo "fidelity $s rc=$?"
  done
  timeout 110 $kg tasks check datasets/heavy --manifest datasets/manifest.json > "$out/heavy-check.txt" 2>&1
  echo "heavy check rc=$?"; cp datasets/manifest.json "$out/manifest.json"
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -6
  tail -4 "$out/heavy-check.txt"
  python3 - "$out" <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
try:
    b = json.load(open(f"{out}/l2.json"))
    print(f"level2: {b['evals_per_s']:.3f} evals/s over {b['evals']} {b['statuses']}")
except Exception as e:
    print("level2", e)
for s in ("heavy", "level2"):
    try:
        d = json.load(open(f"{out}/fidelity-{s}.json"))
        print(f"{s} fidelity:", json.dumps(d["summary"]), "excluded", [e["task"] for e in d.get("excluded") or []])
        for p in d.get("passes") or []:
            r = p.get("report") or {}
            print("  pass", p.get("name"), "conc", p.get("concurrency"), "evals/s", round(r.get("evals_per_s") or 0, 3), r.get("statuses"))
    except Exception as e:
        print(s, "fidelity", e)
PY
fi

if [ "$phase" = l2x3 ]; then
  # The GPU suite once, then level2 throughput three times (REPEAT per kernel, 16 in flight):
  # a median over runs where one run's spread is as large as the target's margin.
  gpu_suite "$out/pytest-gpu.log"
  for i in 1 2 3; do
    timeout $((20 + 10 * ${REPEAT:-12})) $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 \
        --repeat ${REPEAT:-12} --concurrency 16 --json > "$out/l2-$i.json" 2> "$out/l2-$i.err"; echo "level2 $i rc=$?"
  done
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest-gpu.log" | tail -6
  python3 - "$out" <<'PY'
import json, sys, statistics as st
out, rates = sys.argv[1], []
for i in (1, 2, 3):
    try:
        b = json.load(open(f"{out}/l2-{i}.json"))
    except Exception as e:
        print(i, e); continue
    rates.append(b["evals_per_s"])
    print(f"level2 run {i}: {b['evals_per_s']:.3f} evals/s over {b['evals']} {b['statuses']} "
          f"window {b['stage_median_ms'].get('lock_exclusive_held', 0):.0f} ms")
if rates:
    print(f"median {st.median(rates):.3f} evals/s")
PY
fi

if [ "$phase" = ab4 ]; then
  # Level2 throughput, this build against OLD, one run each in the order new, old, new, old
  # (REPEAT per kernel, 16 in flight).
  i=0
  for b in "$kg" "${OLD:?}" "$kg" "${OLD:?}"; do
    i=$((i+1))
    timeout $((30 + 18 * ${REPEAT:-5})) $b bench --tasks datasets/level2 --kernels datasets/solutions/level2 \
        --repeat ${REPEAT:-5} --concurrency 16 --json > "$out/ab$i.json" 2> "$out/ab$i.err"; echo "bench $i ($b) rc=$?"
  done
  python3 - "$out" <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
for i, name in ((1, "new"), (2, "old"), (3, "new"), (4, "old")):
    try:
        b = json.load(open(f"{out}/ab{i}.json"))
    except Exception as e:
        print(i, name, e); continue
    rows = b["rows"]
    s = b["stage_median_ms"]
    print(f"{i} {name}: {b['evals_per_s']:.3f} evals/s over {b['evals']} {b['statuses']} in flight "
          f"{sum(r['latency_ms'] for r in rows)/1e3/b['wall_s']:.1f}; window {s.get('lock_exclusive_held', 0):.0f} ms; "
          f"lock wait {s.get('lock_wait', 0):.0f} ms; head median {st.median([(r.get('wall_check') or {}).get('head_ms') or 0 for r in rows])}")
PY
fi

if [ "$phase" = slots ]; then
  # Level2 throughput with 16 and 24 evaluation slots on the GPU, one run.
  for n in 16 24; do
    KERNELGATE_CONCURRENCY=$n timeout 120 $kg bench --tasks datasets/level2 --kernels datasets/solutions/level2 \
        --repeat ${REPEAT:-5} --json > "$out/bench-s$n.json" 2> "$out/bench-s$n.err"; echo "bench slots=$n rc=$?"
  done
  python3 - "$out" <<'PY'
import json, sys
for n in (16, 24):
    b = json.load(open(f"{sys.argv[1]}/bench-s{n}.json"))
    s = b["stage_median_ms"]
    print(f"slots {n}: {b['evals_per_s']:.2f} evals/s over {b['evals']} {b['statuses']} p50 {b['latency_p50_ms']:.0f} ms; "
          f"load {s.get('load', 0):.0f} correctness {s.get('correctness', 0):.0f} mem wait {s.get('lock_mem_wait', 0):.0f}")
PY
fi
