"""Summarise an h200-search.sh run: per step, the search's own overhead
(step_ms - llm_ms - eval_ms) and its share of the step; the speedups by action."""
import json
import re
import statistics
import sys

PAIR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def steps(log_path):
    for line in open(log_path):
        if 'msg=step ' not in line:
            continue
        kv = {k: v.strip('"') for k, v in PAIR.findall(line)}
        yield kv


def main():
    rows = list(steps(sys.argv[1]))
    res = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else {}
    share, over, by_action = [], [], {}
    print(f"{'node':>4} {'action':7} {'reward':>7} {'llm_ms':>8} {'eval_ms':>9} {'step_ms':>9} {'own_ms':>7}")
    for r in rows:
        step, llm, ev = (float(r.get(k, 0) or 0) for k in ("step_ms", "llm_ms", "eval_ms"))
        own = step - llm - ev
        if step > 0 and not r.get("error"):
            share.append(own / step)
            over.append(own)
            reward = float(r.get("reward", 0))
            if reward >= 0.4:  # correct: DESIGN.md's reward inverted to the speedup
                by_action.setdefault(r.get("action"), []).append((reward - 0.4) * 9.9 / 1.2 + 0.1)
        print(f"{r.get('node', ''):>4} {r.get('action', ''):7} {float(r.get('reward', 0)):7.3f} "
              f"{llm:8.1f} {ev:9.1f} {step:9.1f} {own:7.2f} {r.get('error', '')[:60]}")
    if share:
        print(f"search overhead: median {statistics.median(over):.2f} ms/step, "
              f"median share {100 * statistics.median(share):.3f}%, max share {100 * max(share):.3f}% over {len(share)} steps")
    for action, sp in by_action.items():
        print(f"{action}: {len(sp)} correct, speedup first {sp[0]:.3f} best {max(sp):.3f}")
    best = (res.get("best") or {})
    print("actions:", res.get("actions"), "best speedup:", best.get("speedup"), "status:", best.get("status"))


if __name__ == "__main__":
    main()
