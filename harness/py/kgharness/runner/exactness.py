"""How far a task's reference is from the exact answer, for task checks: the reference as
written, and a float64 copy of it on the same inputs rounded once to each output's dtype,
compared the way the judge compares a candidate. The share of the tolerance between the
two is what an honest kernel finds already spent before its own rounding: torch's bf16
GroupNorm + SiLU put a kernel with exact statistics at 0.86 of bf16's default tolerance,
and one evaluation in 112 rejected it (docs/measurements/2026-12-04-groups-start-together.md).

Runs in the reference runner, on the task's own objects: a task that lies here misleads
only its author. Advice, never a verdict: it decides no status.
"""

import copy
import math

import torch

from .. import inputs as I
from ..correctness import chunks
from . import taskinfo
from .exactsize import exact_need_mb, exact_pass_mb


def to64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.float64)
    if isinstance(x, (list, tuple)):
        return type(x)(to64(v) for v in x)
    return x


def _short(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


def measure(model, make, tol, max_mb=None):
    """The worst element over the floating outputs for one call on make()'s inputs: {"used":
    its share of the tolerance, "output", "index", "reference", "exact", "elements" (how
    many were compared)}; {"used": None, "note": why} when the float64 copy cannot say (it
    cannot be made, it raises, or it casts back inside forward, so what it returns was not
    computed in float64), or, given max_mb, when it would need more than max_mb MiB
    (exact_pass_mb of the call's inputs, parameters and outputs, measured here: a
    held-out set's size is known only here)."""
    inputs = make()
    with torch.no_grad():
        ref = I.flatten(model(*inputs))
    if max_mb is not None:
        params = list(model.parameters()) + list(model.buffers())
        call_mb = (taskinfo.nbytes(I.flatten(inputs)) + taskinfo.nbytes(params) + taskinfo.nbytes(ref)) / (1 << 20)
        if exact_pass_mb(call_mb, max_mb) is None:
            return {"used": None, "note": f"not measured: a float64 copy of this call needs about "
                                          f"{exact_need_mb(call_mb):.0f} MiB, more than {max_mb:.0f}"}
    try:
        twin = copy.deepcopy(model).to(torch.float64)
    except Exception as e:   # noqa: BLE001 - the task's model; say why and go on
        return {"used": None, "note": f"the reference's model could not be copied to float64 ({_short(e)})"}
    with torch.no_grad():
        wide = to64(inputs)
        del inputs
        try:
            exact = I.flatten(twin(*wide))
        except Exception as e:   # noqa: BLE001
            return {"used": None, "note": f"its float64 copy raised {_short(e)}"}
    del wide, twin
    worst = {"used": 0.0, "output": None, "index": None, "reference": None, "exact": None, "elements": 0}
    if len(exact) != len(ref):
        return {"used": None, "note": "its float64 copy returned another number of outputs"}
    for i, (r, e) in enumerate(zip(ref, exact)):
        if not (isinstance(r, torch.Tensor) and r.is_floating_point() and r.numel()):
            continue
        if not isinstance(e, torch.Tensor) or e.shape != r.shape:
            return {"used": None, "note": f"its float64 copy's output {i} has another shape"}
        if e.dtype != torch.float64:
            return {"used": None, "note": f"its float64 copy returned output {i} as {str(e.dtype)[6:]}: "
                                          "the reference casts inside forward(), so it was not computed in float64"}
        _worst_in(i, r, e.to(r.dtype), tol, worst)
        worst["elements"] += r.numel()
    if not math.isfinite(worst["used"]):
        return {"used": None, "note": f"its float64 copy gave a non-finite value at output {worst['output']} "
                                      f"index {worst['index']}, where the reference gave {worst['reference']:g}"}
    return worst


def _worst_in(i, r, rounded, tol, worst):
    """Update worst with the largest |rounded - r| / (atol + rtol * |r|) of output i, as
    the judge's comparison bounds a candidate (kgharness.correctness.compare)."""
    for k, (a, b) in chunks(r, rounded):
        a, b = a.to(torch.float64), b.to(torch.float64)
        diff = (b - a).abs()
        share = diff / (tol["atol"] + tol["rtol"] * a.abs())
        # Equal is 0 even where atol is 0 and the value too; NaN (a non-finite exact value)
        # is the worst there is.
        share = torch.where(diff == 0, torch.zeros_like(share), share)
        share = torch.where(torch.isnan(share), torch.full_like(share, float("inf")), share)
        j = int(torch.argmax(share))
        used = float(share[j])
        if used > worst["used"] or worst["output"] is None:
            idx = [int(x) for x in torch.unravel_index(torch.tensor(k + j), r.shape)]
            worst.update(used=used, output=i, index=idx, reference=float(a[j]), exact=float(b[j]))
