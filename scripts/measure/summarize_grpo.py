"""Summarise scripts/measure/grpo_bench.py reports: throughput, slot use, makespans,
and where an evaluation's time went (median stage_ms over all members, and the sum of
the timing windows, which no two evaluations of one GPU overlap).

usage: python3 scripts/measure/summarize_grpo.py grpo-off.json [grpo-on.json ...]
"""
import json
import statistics
import sys

STAGES = ("fork", "admission", "lock_mem_wait", "load", "reference", "candidate_build", "correctness",
          "first_call", "lock_wait", "timing", "lock_exclusive_held", "lock_freeze", "window_open", "window_gate",
          "window_prelude", "window_before", "window_pairs", "window_prep", "window_go", "window_check",
          "window_calls", "window_switch", "window_verify", "window_verifies", "window_close", "lock_frozen",
          "trial_calls", "trial_checks", "reference_cuda", "candidate_cuda", "reference_later",
          "reference_later_wait", "checks", "total")


def busy(report, members):
    """Slot use less the waits for device memory and the timing lock (from the members, so
    reports written before grpo_bench's slot_busy read the same)."""
    cap = (report.get("slots") or 0) * (report.get("wall_s") or 0)
    if not cap or cap != cap:
        return 0.0
    st = [m.get("stage_ms") or {} for m in members]
    return sum(m.get("exec_s", 0) - (x.get("lock_mem_wait", 0) + x.get("lock_wait", 0)) / 1e3
               for m, x in zip(members, st)) / cap


def bound(report, members):
    """What bounds the run on one GPU. Each evaluation holds its admission for H = X + W +
    the time it is stopped by other evaluations' windows (a share f = evals/s * W of the
    wall), so H = (X + W) / (1 - f), and by Little's law evals/s = C / H = C / (X + W + C*W):
    C from the members' admitted time over the wall, W their mean window, X what is left."""
    wall, n = report.get("wall_s") or 0, len(members)
    if not n or not wall or wall != wall:
        return None
    st = [m.get("stage_ms") or {} for m in members]
    # Not admitted yet: the waits, and the kernels compiled before admission (kgharness.runner.precompile;
    # as recorded before 7affa97 that stage was twice its time, so this under-counts those runs).
    held = [(x.get("total", 0) - x.get("lock_mem_wait", 0) - x.get("lock_wait", 0) - x.get("precompile", 0)) / 1e3
            for x in st]
    W = sum(x.get("lock_exclusive_held", 0) for x in st) / 1e3 / n
    C, H = sum(held) / wall, sum(held) / n
    if W <= 0 or H <= 0:
        return None
    f = min(n / wall * W, 0.99)
    X = max(H * (1 - f) - W, 0.0)
    out = {"C": C, "X": X, "W": W, "model": C / (X + W + C * W), "double": 2 * C / (X + W + 2 * C * W),
           "ceiling": 1 / W, "stopped": None}
    if any("lock_frozen" in x for x in st):
        # Measured, where the zygote reports it: the time each was stopped, and X as what is left.
        S = sum(x.get("lock_frozen", 0) for x in st) / 1e3 / n
        out.update(stopped=S, X_measured=max(H - W - S, 0.0))
    return out


def main(paths):
    reports = []
    for p in paths:
        try:
            if p.endswith(".partial"):   # a run cut short: the groups that landed
                gs = [json.loads(x) for x in open(p) if x.strip()]
                st = {}
                for g in gs:
                    for m in g["members"]:
                        st[m["status"]] = st.get(m["status"], 0) + 1
                reports.append((p, {"evals": sum(g["n"] for g in gs), "wall_s": float("nan"), "evals_per_s": 0,
                                    "slots": 0, "slot_utilisation": 0, "makespan_over_slowest_median": 0,
                                    "makespan_over_slowest_max": 0, "statuses": st, "per_group": gs,
                                    "reference_ms_total": sum(g["reference_ms_total"] for g in gs)}))
            else:
                reports.append((p, json.load(open(p))))
        except (OSError, ValueError) as e:
            print(f"{p}: {e}")
    for p, r in reports:
        ms = [m for g in r["per_group"] for m in g["members"]]
        print(f"{p}: {r['evals']} evals in {r['wall_s']:.1f} s = {r['evals_per_s']:.3f} evals/s; "
              f"slots {r['slots']}, utilisation {100 * (r['slot_utilisation'] or 0):.0f}% "
              f"(busy {100 * busy(r, ms):.0f}%); makespan/slowest "
              f"median {r['makespan_over_slowest_median'] or 0:.2f} max {r['makespan_over_slowest_max'] or 0:.2f}"
              f" (after the first start {r.get('after_start_over_slowest_median') or 0:.2f}"
              f" max {r.get('after_start_over_slowest_max') or 0:.2f}); "
              f"reference loads {r['reference_ms_total'] / 1e3:.1f} s, reference CPU "
              f"{r.get('reference_cpu_ms_total', 0) / 1e3:.1f} s; {r['statuses']}")
        # The order the groups started in: which tasks shared the GPU (one binary ran 1.20-1.50
        # evals/s as it changed). A partial report has no stagger_s: its offsets are left out.
        lag = r.get("stagger_s") or 0.0
        starts = sorted((g.get("first_start_s", 0.0) + i * lag, g["task_id"].split("/")[-1].split("_")[0])
                        for i, g in enumerate(r["per_group"]))
        print("   groups by first start: " + " ".join(f"{t}@{s:.0f}s" for s, t in starts))
        line = []
        for k in STAGES:
            xs = [m["stage_ms"].get(k) for m in ms if isinstance(m.get("stage_ms"), dict) and m["stage_ms"].get(k)]
            if xs:
                line.append(f"{k} {statistics.median(xs):.0f}")
        print("   median ms: " + ", ".join(line))
        held = sum(m["stage_ms"].get("lock_exclusive_held", 0) for m in ms if isinstance(m.get("stage_ms"), dict))
        print(f"   timing windows held in all: {held / 1e3:.1f} s of {r['wall_s']:.1f} s wall")
        b = bound(r, ms)
        if b:
            print("   bound: C {C:.1f} admitted at once, X {X:.2f} s of own work outside windows, W {W:.3f} s "
                  "of window an evaluation: C / (X + W + C*W) = {model:.2f} evals/s; 2C would give {double:.2f}; "
                  "no C beats 1/W = {ceiling:.2f}".format(**b))
            if b["stopped"] is not None:
                print("   measured: stopped {stopped:.2f} s an evaluation (the model's C*W: {cw:.2f}), "
                      "X {X_measured:.2f} s".format(cw=b["C"] * b["W"], **b))
        mem = [sum(m["device_memory"].values()) for m in ms if isinstance(m.get("device_memory"), dict)]
        owed = [m for m in ms if (m.get("stage_ms") or {}).get("reference_owed")]
        # Owing because a reference host was ready at the grant: the borrow cancelled it.
        borrowed = sum(1 for m in owed if m["stage_ms"].get("reference_host") == 1)
        print(f"   reference_shared {sum(1 for m in ms if m.get('reference_shared'))} of {len(ms)}, "
              f"admitted without their reference {len(owed)} ({borrowed} then borrowed a host); device memory "
              f"per evaluation median {statistics.median(mem) if mem else 0:.0f} MiB (contexts not counted)")
        roles = [(m.get("stage_ms") or {}).get("reference_host") for m in ms]
        if any(roles):
            borrow = [m["stage_ms"]["window_borrow"] for m in ms if (m.get("stage_ms") or {}).get("window_borrow")]
            print(f"   reference hosts: created by {roles.count(2.0)}, borrowed by {roles.count(1.0)} "
                  f"(in a window: {len(borrow)}, median {statistics.median(borrow) if borrow else 0:.1f} ms to borrow), "
                  f"none {roles.count(None)}")
            for name, role in (("borrowers", 1.0), ("the rest", None)):
                st = [m["stage_ms"] for m in ms if (m.get("stage_ms") or {}).get("reference_host") == role]
                if st:
                    print(f"     {name}: median ms " + ", ".join(
                        f"{k} {statistics.median(x.get(k, 0) for x in st):.0f}"
                        for k in ("lock_mem_wait", "load", "correctness", "lock_exclusive_held", "cpu_reference")))
        calls = [m for m in ms if m.get("runtime_ms") and (m.get("stage_ms") or {}).get("window_calls")]
        if calls:
            def med(f):
                return statistics.median(f(m) for m in calls)
            print(f"   a window's call: go {med(lambda m: m['stage_ms']['window_go'] / m['stage_ms']['window_calls']):.2f} ms "
                  f"(candidate {med(lambda m: m['runtime_ms']):.2f}, reference {med(lambda m: m['ref_runtime_ms']):.2f} ms "
                  f"on their clocks; overhead {med(lambda m: (m.get('wall_check') or {}).get('ref_overhead_ms', 0)):.2f} / "
                  f"{med(lambda m: (m.get('wall_check') or {}).get('cand_overhead_ms', 0)):.2f} ms, head "
                  f"{med(lambda m: (m.get('wall_check') or {}).get('head_ms', 0)):.2f} ms; the inputs inside go, "
                  f"or prep {med(lambda m: m['stage_ms'].get('window_prep', 0) / m['stage_ms']['window_calls']):.2f} "
                  f"before 2026-12-02), check "
                  f"{med(lambda m: m['stage_ms'].get('window_check', 0) / m['stage_ms']['window_calls']):.2f} ms")
            if all("window_go_timed" in m["stage_ms"] for m in calls):
                # The runner's own word on its timed request (2026-12-02 on); the rest of go is messages.
                print("   a call's request, runner's parts: " + ", ".join(
                    f"{k} {med(lambda m: m['stage_ms']['window_go_' + k] / m['stage_ms']['window_calls']):.2f}"
                    for k in ("inputs", "timed", "write")) + " ms")
        tc = [m for m in ms if (m.get("stage_ms") or {}).get("trial_call_n")]
        if tc:
            # The runner's own word on a correctness call after its first (2026-12-03 on).
            def per_call(k):
                return statistics.median(m["stage_ms"].get("trial_call_" + k, 0) / m["stage_ms"]["trial_call_n"]
                                         for m in tc)
            judge = statistics.median((m["stage_ms"].get("trial_calls", 0) - m["stage_ms"].get("first_call", 0)
                                       - m["stage_ms"].get("trial_held", 0)) / m["stage_ms"]["trial_call_n"] for m in tc)
            # trial_held (2026-12-03 on): the held-out sets' calls, a compile for their shapes each.
            print(f"   a correctness call on a seed after the first: {judge:.1f} ms on the judge's clock; runner's parts: "
                  + ", ".join(f"{k} {per_call(k):.1f}" for k in ("inputs", "in_sum", "run", "after"))
                  + f" ms ({statistics.median(m['stage_ms']['trial_call_n'] for m in tc):.0f} calls); the held-out "
                  f"sets' calls {statistics.median(m['stage_ms'].get('trial_held', 0) for m in tc):.0f} ms")
        kinds = {}
        for m in ms:
            kinds.setdefault(m["kind"], []).append(m)
        for kind, xs in sorted(kinds.items()):
            ex = statistics.median(x["exec_s"] for x in xs)
            win = statistics.median(x["stage_ms"].get("lock_exclusive_held", 0) for x in xs) / 1e3
            print(f"   {kind:14s} n={len(xs):3d} exec median {ex:6.2f} s, window {win:5.2f} s, "
                  f"statuses {sorted({x['status'] for x in xs})}")


if __name__ == "__main__":
    main(sys.argv[1:])
