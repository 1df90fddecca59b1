"""What a Guard (kgharness.guards) snapshots before the candidate's code runs and compares
after: every callable the harness relies on, by identity, and torch's global numeric-precision
flags. Captured at import time, in the zygote, before any candidate exists: later
monkey-patching of torch, time or builtins cannot reach the harness's own comparisons and
timers, which call through T.
"""

import builtins
import os
import sys
import time
import types

import torch

# ---- trusted callables, captured before any candidate code exists -----------------
_VF = torch._C._VariableFunctions
T = types.SimpleNamespace(
    abs=_VF.abs, sub=_VF.sub, le=_VF.le, isfinite=_VF.isfinite, logical_and=_VF.logical_and,
    max=_VF.max, min=_VF.min, sum=_VF.sum, isnan=_VF.isnan, where=_VF.where, argmax=_VF.argmax,
    ne=_VF.ne, gt=_VF.gt, all=_VF.all, logical_not=_VF.logical_not, equal=_VF.equal,
    full_like=_VF.full_like, stack=_VF.stack, manual_seed=torch.manual_seed, copy=torch._C.TensorBase.copy_,
    perf_counter=time.perf_counter, monotonic=time.monotonic,
    cuda_sync=getattr(torch._C, "_cuda_synchronize", None),
    isinstance=builtins.isinstance, type=builtins.type, len=builtins.len, float=builtins.float,
)

_WATCHED_MODULES = (torch, torch.cuda, time, builtins, torch.Tensor, torch.nn.Module,
                    torch.nn.functional, torch.testing)
_WATCHED_NAMES = {
    torch: ("allclose", "equal", "isclose", "manual_seed", "no_grad", "compile", "empty", "abs",
            "sub", "max", "sum", "isfinite", "where", "get_float32_matmul_precision",
            "set_float32_matmul_precision"),
    torch.cuda: ("synchronize", "Event", "Stream", "current_stream", "default_stream",
                 "stream", "empty_cache", "get_device_properties"),
    time: ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns",
           "process_time", "sleep"),
    torch.testing: ("assert_close",),
}


def identities():
    """Every function the harness (or a fair comparison) depends on, by name."""
    out = {}
    for mod, names in _WATCHED_NAMES.items():
        for n in names:
            out[f"{mod.__name__}.{n}"] = getattr(mod, n, None)
    for cls in (torch.Tensor, torch._C.TensorBase, torch.nn.Module,
                getattr(torch._C, "_CudaEventBase", None), getattr(torch._C, "_CudaStreamBase", None)):
        if cls is None:
            continue
        for k, v in list(vars(cls).items()):
            out[f"{cls.__name__}.{k}"] = v
    for k, v in list(vars(builtins).items()):
        if callable(v) and not k.startswith("_"):
            out[f"builtins.{k}"] = v
    out["builtins.__import__"] = builtins.__import__
    for cls_name in ("Event", "Stream"):
        cls = getattr(torch.cuda, cls_name, None)
        for k in ("record", "elapsed_time", "synchronize", "query", "wait_stream", "wait_event"):
            out[f"torch.cuda.{cls_name}.{k}"] = getattr(cls, k, None)
    for name, mod in list(sys.modules.items()):
        if name.startswith("kgharness") and mod is not None:
            for k, v in list(vars(mod).items()):
                if callable(v) or isinstance(v, types.SimpleNamespace):
                    out[f"{name}.{k}"] = v
    for k, v in list(vars(T).items()):
        out[f"T.{k}"] = v
    for cls in jit_classes():
        out[f"{cls.__name__}.run"] = vars(cls).get("run")
    return out


# torch._dynamo replaces these with its own wrappers on import / first compile: not a hack.
_DYNAMO_PATCHED = ("torch.manual_seed", "Module.__init__", "Module.__setstate__")
_TORCH_DIR = os.path.realpath(os.path.dirname(torch.__file__))


def benign(key, new):
    code = getattr(new, "__code__", None)
    return key in _DYNAMO_PATCHED and code is not None and \
        os.path.realpath(code.co_filename).startswith(_TORCH_DIR + os.sep)


# torch >= 2.9 keeps fp32 precision per backend and operator (the "new API"); the legacy
# flags are views of it that raise once the two APIs disagree. A candidate that sets
# cudnn.conv's precision made the legacy read raise, and the guard with it: a
# runtime_error instead of the `precision` flag. So the snapshot reads the new API (it
# never raises) and the legacy views safely.
_FP32_PRECISION = (("fp32_precision", ()), ("cuda.matmul.fp32_precision", ("cuda", "matmul")),
                   ("cudnn.fp32_precision", ("cudnn",)), ("cudnn.conv.fp32_precision", ("cudnn", "conv")),
                   ("cudnn.rnn.fp32_precision", ("cudnn", "rnn")), ("mkldnn.fp32_precision", ("mkldnn",)),
                   ("mkldnn.matmul.fp32_precision", ("mkldnn", "matmul")),
                   ("mkldnn.conv.fp32_precision", ("mkldnn", "conv")),
                   ("mkldnn.rnn.fp32_precision", ("mkldnn", "rnn")))


def _precision_holders():
    """(flag name, object with fp32_precision) for what this torch has."""
    out = []
    for name, path in _FP32_PRECISION:
        obj = torch.backends
        for part in path:
            obj = getattr(obj, part, None)
        if obj is not None and hasattr(obj, "fp32_precision"):
            out.append((name, obj))
    return out


_HOLDERS = _precision_holders()   # torch's backend modules: fixed for the process


def _read(get):
    try:
        return get()
    except RuntimeError:       # the legacy view of a mixed state
        return None


def flags():
    """Global numeric-precision and determinism flags a candidate might flip."""
    b = torch.backends
    out = {name: obj.fp32_precision for name, obj in _HOLDERS}
    out.update({
        "cuda.matmul.allow_tf32": _read(lambda: b.cuda.matmul.allow_tf32),
        "cudnn.allow_tf32": _read(lambda: b.cudnn.allow_tf32),
        "float32_matmul_precision": _read(torch.get_float32_matmul_precision),
        "cuda.matmul.allow_fp16_reduced": b.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "cuda.matmul.allow_bf16_reduced": b.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "cudnn.benchmark": b.cudnn.benchmark,
        "cudnn.deterministic": b.cudnn.deterministic,
    })
    return out


PRECISION_FLAGS = ("cuda.matmul.allow_tf32", "cudnn.allow_tf32", "float32_matmul_precision",
                   "cuda.matmul.allow_fp16_reduced", "cuda.matmul.allow_bf16_reduced") + \
    tuple(name for name, _ in _FP32_PRECISION)


def restore_flags(saved):
    """Back to the snapshot: the legacy flags first (each also sets the new API's values),
    then the new API's values that still differ. Setting the new API's values alone left
    the legacy views raising (tests/test_precision.py tries every sequence of up to three
    moves from torch's default state and from kgharness.zygote.startup.ieee_fp32's)."""
    b = torch.backends
    if saved["float32_matmul_precision"] is not None:
        torch.set_float32_matmul_precision(saved["float32_matmul_precision"])
    if saved["cuda.matmul.allow_tf32"] is not None:
        b.cuda.matmul.allow_tf32 = saved["cuda.matmul.allow_tf32"]
    if saved["cudnn.allow_tf32"] is not None:
        b.cudnn.allow_tf32 = saved["cudnn.allow_tf32"]
    for name, obj in _HOLDERS:
        if obj.fp32_precision != saved[name]:
            obj.fp32_precision = saved[name]
    b.cuda.matmul.allow_fp16_reduced_precision_reduction = saved["cuda.matmul.allow_fp16_reduced"]
    b.cuda.matmul.allow_bf16_reduced_precision_reduction = saved["cuda.matmul.allow_bf16_reduced"]
    b.cudnn.benchmark = saved["cudnn.benchmark"]
    b.cudnn.deterministic = saved["cudnn.deterministic"]


def jit_classes():
    """Triton's kernel classes whose `run` launches (the guards count launches there)."""
    out = []
    try:
        from triton.runtime.jit import JITFunction
        out.append(JITFunction)
    except Exception:
        pass
    try:
        from triton.runtime.interpreter import InterpretedFunction
        out.append(InterpretedFunction)
    except Exception:
        pass
    return out
