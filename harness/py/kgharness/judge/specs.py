"""What a runner says its outputs are (a spec: one leaf per output), checked before the
judge lays out a buffer for them or compares them (kgharness.judge.trials)."""

from .. import exchange

MAX_LEAVES = 256
MAX_DIMS = 16
MAX_NUMEL = 1 << 40


def invalid_spec(spec):
    if not isinstance(spec, list) or not spec or len(spec) > MAX_LEAVES:
        return "not a list of 1..256 outputs"
    for leaf in spec:
        if not isinstance(leaf, dict) or leaf.get("kind") not in ("tensor", "scalar", "other"):
            return "an output of unknown kind"
        if leaf["kind"] == "tensor":
            shape = leaf.get("shape")
            if exchange.dtype_of(leaf.get("dtype")) is None:
                return f"unsupported dtype {str(leaf.get('dtype'))[:32]!r}"
            if not isinstance(shape, list) or len(shape) > MAX_DIMS or \
                    not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < MAX_NUMEL for s in shape):
                return "a bad shape"
            n = 1
            for s in shape:
                n *= s
            if n > MAX_NUMEL or not isinstance(leaf.get("device"), str) or len(leaf["device"]) > 32:
                return "a tensor too large or on no device"
        elif leaf["kind"] == "scalar":
            if not isinstance(leaf.get("value"), (int, float, bool)):
                return "a scalar that is not a number"
    return ""


def spec_mismatch(cand, ref):
    """Why the candidate's outputs cannot be the reference's (a compare() result), or None."""
    res = {"ok": False, "flag": None, "msg": "", "max_abs": 0.0, "max_rel": 0.0, "scaled": 0.0}
    if len(cand) != len(ref):
        return dict(res, msg=f"returned {len(cand)} outputs, expected {len(ref)}")
    for i, (o, r) in enumerate(zip(cand, ref)):
        name = f"output {i}" if len(ref) > 1 else "output"
        if r["kind"] == "scalar":
            if o["kind"] != "scalar":
                return dict(res, msg=f"{name} is a {o.get('type', o['kind'])}, expected a number")
            continue
        if r["kind"] != "tensor":
            return dict(res, msg=f"{name}: unsupported reference output type {r.get('type')}")
        if o["kind"] != "tensor":
            if o.get("lazy"):
                return dict(res, flag="lazy_output", msg=f"{name} is a {str(o.get('type'))[:80]}; "
                            f"return a plain torch.Tensor with real storage")
            what = o.get("type") if o["kind"] == "other" else "number"
            return dict(res, msg=f"{name} has type {str(what)[:80]}, expected torch.Tensor")
        if o["device"] != r["device"]:
            return dict(res, msg=f"{name} is on {o['device'][:32]}, expected {r['device']}")
        if o["dtype"] != r["dtype"]:
            return dict(res, msg=f"{name} has dtype torch.{o['dtype']}, expected torch.{r['dtype']}")
        if o["shape"] != r["shape"]:
            return dict(res, msg=f"{name} has shape {tuple(o['shape'])}, expected {tuple(r['shape'])}")
    return None
