"""A short table of `kernelgate redteam --json` reports: per class, caught / evaluated per
suite and the statuses that caught them; the totals last. Usage: redteam_table.py REPORT..."""
import json
import sys


def main(paths):
    reports = []
    for p in paths:
        try:
            with open(p) as f:
                reports.append((p, json.load(f)))
        except (OSError, ValueError) as e:
            print(f"{p}: no report ({e})")
    rows = {}
    for p, r in reports:
        for c in r.get("classes", []):
            rows.setdefault(c["name"], []).append(
                f"{c['caught']}/{c['evaluated']}" + (f" M{c['missed']}" if c["missed"] else "") +
                (f" E{c['errors']}" if c["errors"] else ""))
    for name, cells in sorted(rows.items()):
        print(f"{name:24s} " + "  ".join(f"{x:10s}" for x in cells))
    for p, r in reports:
        print(f"{p.rsplit('/', 1)[-1]}: {len(r.get('tasks', []))} tasks, generated {r['generated']}, "
              f"evaluated {r['evaluated']}, caught {r['caught']}, missed {r['missed']}, errors {r['errors']}, "
              f"skipped {r['skipped']}, controls failed {r['controls_failed']}, {r['wall_s']:.0f} s, ok={r['ok']}")
        for c in r.get("classes", []):
            for t in c.get("tasks", []):
                if not t.get("caught") and t.get("status") not in (None, "skipped"):
                    print(f"  miss/error: {c['name']} {t['task']} {t.get('status')} {t.get('flags')} "
                          f"{str(t.get('feedback', ''))[:120]}")
        for ctl in r.get("controls", []):
            if ctl.get("status") != "correct":
                print(f"  control: {ctl.get('task')} {ctl.get('status')} {str(ctl.get('feedback', ''))[:160]}")


if __name__ == "__main__":
    main(sys.argv[1:])
