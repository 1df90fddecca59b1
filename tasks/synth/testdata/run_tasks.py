"""Check a directory of generated tasks by running them: run_tasks.py [--meta] DIR.

Default (small tasks, CPU): for seeds 0 and 1, build Model, run forward on
get_inputs() and on every get_held_out_inputs() set, and require finite
outputs of the declared dtype and (from synth.json) shape, outputs that
change with the seed, and outputs no constant could match at the dtype's
tolerance (std > 1e-3 * mean |out| and not allclose to their own mean).
--meta (gpu tasks): build and run the full sizes on the meta device, which
checks shapes and dtypes without allocating.
Prints one line per failing file and exits 1 if any failed.
"""
import importlib.util
import json
import pathlib
import sys

import torch

# (atol, rtol): the harness's defaults (docs/protocol.md).
TOL = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (1e-2, 1.6e-2)}


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(mod, seed):
    torch.manual_seed(seed)
    model = mod.Model(*mod.get_init_inputs())
    with torch.no_grad():
        outs = [model(*mod.get_inputs())]
        outs += [model(*ins) for ins in mod.get_held_out_inputs()]
    return outs


def check_values(mod, expect):
    a, b = run(mod, 0), run(mod, 1)
    atol, rtol = TOL[mod.DTYPE]
    for i, (x, y) in enumerate(zip(a, b)):
        where = "get_inputs()" if i == 0 else f"held-out set {i}"
        if x.dtype != mod.DTYPE:
            return f"{where}: dtype {x.dtype}, declared {mod.DTYPE}"
        if i == 0 and expect is not None and list(x.shape) != expect:
            return f"shape {list(x.shape)}, generator says {expect}"
        x, y = x.float(), y.float()
        if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
            return f"{where}: non-finite output"
        if torch.allclose(x, y, atol=atol, rtol=rtol):
            return f"{where}: same output for seeds 0 and 1"
        if x.numel() > 1 and not x.std() > 1e-3 * x.abs().mean():
            return f"{where}: near-constant output (std {x.std():.3g}, mean |x| {x.abs().mean():.3g})"
        if torch.allclose(x, torch.full_like(x, x.mean().item()), atol=atol, rtol=rtol):
            return f"{where}: a constant {x.mean().item():.3g} passes at tolerance {atol}/{rtol}"
    return None


def check_meta(mod, expect):
    with torch.device("meta"):
        model = mod.Model(*mod.get_init_inputs())
        out = model(*mod.get_inputs())
        for ins in mod.get_held_out_inputs():
            model(*ins)
    if out.dtype != mod.DTYPE:
        return f"dtype {out.dtype}, declared {mod.DTYPE}"
    if expect is not None and list(out.shape) != expect:
        return f"shape {list(out.shape)}, generator says {expect}"
    return None


def check_format(mod, path):
    doc = (mod.__doc__ or "").splitlines()
    if not doc or not doc[0].startswith("Synthetic: "):
        return "docstring's first line does not name the chain"
    if not isinstance(mod.TAGS, list) or not all(isinstance(t, str) and t == t.lower() for t in mod.TAGS):
        return f"TAGS {mod.TAGS!r}"
    if not any(line.startswith("TAGS = [") and line.endswith("]") for line in path.read_text().splitlines()):
        return "TAGS is not a one-line literal"
    if hasattr(mod, "MIN_BYTES") and not (isinstance(mod.MIN_BYTES, int) and mod.MIN_BYTES > 0):
        return f"MIN_BYTES {mod.MIN_BYTES!r}"
    return None


def main(argv):
    meta = "--meta" in argv
    dirs = [a for a in argv if a != "--meta"]
    if len(dirs) != 1:
        sys.exit(__doc__.splitlines()[0])
    root = pathlib.Path(dirs[0])
    manifest = root / "synth.json"
    shapes = {}
    if manifest.exists():
        shapes = {f["file"]: f["shape"] for f in json.loads(manifest.read_text())["files"]}
    paths = sorted(root.glob("*.py"))
    failed = 0
    for path in paths:
        try:
            mod = load(path)
            err = check_format(mod, path) or (check_meta if meta else check_values)(mod, shapes.get(path.name))
        except Exception as e:  # a task that raises is the failure being looked for
            err = f"{type(e).__name__}: {e}"
        if err:
            failed += 1
            print(f"FAIL {path.name}: {err}")
    print(f"{len(paths) - failed}/{len(paths)} tasks ok ({'meta' if meta else 'cpu'})")
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
