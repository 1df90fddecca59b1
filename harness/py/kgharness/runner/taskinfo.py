"""What a task is, found without computing it: a pass on the meta device.

`kernelgate tasks check` needs, for every task, its output shapes and dtypes, how many
bytes and FLOPs one forward call moves and does, and its declared name and tags. On
torch's meta device, tensors have shapes and dtypes but no storage, so this costs
milliseconds even for a task sized for an H200; the FLOPs come from torch's own
FlopCounterMode (matmuls and convolutions; elementwise work counts zero). The CPU path
uses the figures to decide which tasks it can afford to run for real.
"""

import ast

import torch
from torch.utils.flop_counter import FlopCounterMode

from .. import inputs as C


def declared(source):
    """(name, tags): the module docstring's first line and a literal TAGS list."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "", []
    doc = (ast.get_docstring(tree) or "").strip().splitlines()
    tags = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TAGS" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, (list, tuple)):
                tags = [str(t) for t in value]
    return (doc[0] if doc else ""), tags


def nbytes(tensors):
    """Bytes held by the tensors among tensors (other items count nothing)."""
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def describe(mod, source, seed):
    """The task's figures from one forward call on the meta device (never raises).

    `meta_error` is set when a step cannot run on meta (data-dependent shapes, .item()):
    the figures it would have given are then None.
    """
    name, tags = declared(source)
    info = {"name": name, "tags": tags, "outputs": [], "input_bytes": None, "param_bytes": None,
            "output_bytes": None, "flops": None, "meta_error": ""}
    try:
        with torch.device("meta"):
            C.seed_all(seed)
            model = mod.Model(*mod.get_init_inputs())
            C.seed_all(seed)
            inputs = list(mod.get_inputs())
        info["input_bytes"] = nbytes(inputs)
        info["param_bytes"] = nbytes(list(model.parameters()) + list(model.buffers()))
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            out = C.flatten(model.eval()(*inputs))
        info["flops"] = int(counter.get_total_flops())
        info["output_bytes"] = nbytes(out)
        info["outputs"] = [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                           for t in out if isinstance(t, torch.Tensor)]
    except Exception as e:  # noqa: BLE001 - a task that cannot run on meta is still a task
        info["meta_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    return info


def footprint_mb(info):
    """Inputs + parameters + outputs of one call, MiB; None when unknown."""
    parts = (info["input_bytes"], info["param_bytes"], info["output_bytes"])
    if any(p is None for p in parts):
        return None
    return sum(parts) / (1 << 20)
