"""Inputs and outputs on a runner's side: seeding, generating inputs on the device,
flattening outputs into leaves, checksums.

Runs in the runners (the processes that run task or candidate code). Everything here
that touches a candidate's objects goes through callables captured in guards.T before
any candidate code was imported, and never calls a method a subclass could override.
"""

import random
import sys

import torch

from .snapshot import T


def seed_all(seed):
    """Seed every RNG a task's get_inputs might reasonably use."""
    T.manual_seed(seed)
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed % (2 ** 32))


def to_device(x, device):
    if type(x) is torch.Tensor or isinstance(x, torch.Tensor):
        return x.to(device) if x.device != torch.device(device) else x
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    return x


def make_inputs(get_inputs, seed, device):
    """Inputs generated on the device itself (GPU RNG is fast), stray CPU tensors moved."""
    with torch.device(device):
        seed_all(seed)
        inputs = list(get_inputs())
    return [to_device(x, device) for x in inputs]


def clone(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(clone(v) for v in x)
    return x


class _Unpaired(Exception):
    pass


def _pair(old, new, pairs, depth=0):
    if T.type(old) is torch.Tensor:
        if T.type(new) is not torch.Tensor or old.shape != new.shape or old.dtype != new.dtype or \
                old.device != new.device or old.stride() != new.stride():
            raise _Unpaired()
        pairs.append((old, new))
        return old
    if T.isinstance(old, torch.Tensor) or T.isinstance(new, torch.Tensor):
        raise _Unpaired()
    base = tuple if T.isinstance(old, tuple) else list if T.isinstance(old, list) else None
    if base is None:
        return new
    if T.type(new) is not T.type(old) or base.__len__(old) != base.__len__(new) or depth > 8:
        raise _Unpaired()
    return [_pair(base.__getitem__(old, i), base.__getitem__(new, i), pairs, depth + 1)
            for i in range(base.__len__(old))]


def refill(old, new):
    """new's values in old's storage: the tensors of a previous call's inputs (the same
    objects at the same addresses) holding another seed's values, so that an output cached
    by address or shape is stale (the pointer-cache trial, kgharness.judge.trials). None where
    the two do not pair tensor for tensor (shape, strides, dtype and device: a task whose
    inputs change shape with the seed) or a copy fails (an expanded input)."""
    pairs = []
    try:
        out = _pair(list(old), list(new), pairs)
        with torch.no_grad():
            for dst, src in pairs:
                T.copy(dst, src)
    except (_Unpaired, RuntimeError):
        return None
    return out


def flatten(out, depth=0):
    """Output leaves in order (tensors, numbers); nested tuples/lists (and namedtuples such
    as torch.return_types) flattened through the base-class slots, so an overridden
    __iter__/__getitem__ on a candidate's subclass never runs."""
    base = tuple if T.isinstance(out, tuple) else list if T.isinstance(out, list) else None
    if base is None or depth > 8:
        return [out]
    leaves = []
    for i in range(base.__len__(out)):
        leaves.extend(flatten(base.__getitem__(out, i), depth + 1))
    return leaves


def fingerprint(leaves):
    """Byte checksums of tensor leaves, queued on the current stream (no sync): the wrapping
    int64 sum of each one's 8-byte words (exact in any order), plus its tail bytes. One read
    of the bytes: summing them as uint8 into int64 made an int64 copy of what it summed (17
    bytes of traffic per byte), and a correctness call checksums its inputs twice and its
    outputs twice, on a GPU its neighbours share (GiBs a call on the heavy suite)."""
    fps = []
    for t in leaves:
        if type(t) is torch.Tensor and t.numel():
            b = t.detach().contiguous().reshape(-1).view(torch.uint8)
            n = b.numel() // 8 * 8
            if n and b.storage_offset() % 8:
                b = b.clone()       # int64 words need an 8-byte-aligned start
            acc = T.sum(b[:n].view(torch.int64)) if n else None
            if n < b.numel():
                tail = T.sum(b[n:], dtype=torch.int64)
                acc = tail if acc is None else acc + tail
            fps.append(acc)
    return fps


def same_bytes(a, b):
    """Bitwise equality (NaN-safe), for the input-mutation check."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if not a.numel():
            return True
        return bool(T.equal(a.contiguous().reshape(-1).view(torch.uint8),
                              b.contiguous().reshape(-1).view(torch.uint8)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_bytes(x, y) for x, y in zip(a, b))
    return True


def input_sum(inputs):
    """Content checksum of an input list (determinism of get_inputs, input mutation)."""
    return sum_value(input_sum_queued(inputs))


def input_sum_queued(inputs):
    """input_sum with its device work queued on the current stream and not waited for:
    read it with sum_value once the stream has been synchronised anyway."""
    return (fingerprint([x for x in inputs if T.type(x) is torch.Tensor]),
            [repr(x)[:64] for x in inputs if not T.isinstance(x, torch.Tensor)])


def sum_value(queued):
    fps, rest = queued
    return read_sums(fps)[0] + rest


def read_sums(*groups):
    """The values of queued checksums (groups of 0-dim tensors), each device's read in one
    transfer: on a GPU that other evaluations share, every read waits for this context's
    turn (kgharness.runner.calls.Calls.call)."""
    flat = [t for g in groups for t in g]
    where = {}
    for i, t in enumerate(flat):
        where.setdefault(t.device, []).append(i)
    vals = [0] * len(flat)
    for idx in where.values():
        for i, v in zip(idx, T.stack([flat[i] for i in idx]).tolist()):
            vals[i] = v
    out, k = [], 0
    for g in groups:
        out.append(vals[k:k + len(g)])
        k += len(g)
    return out


def leaf_spec(leaf):
    """What one output leaf is, in JSON: a plain tensor, a number, or something else."""
    kind = T.type(leaf)
    if kind is torch.Tensor:
        if leaf.is_meta or leaf.layout != torch.strided:
            return {"kind": "other", "type": "tensor without real storage", "lazy": True}
        return {"kind": "tensor", "dtype": str(leaf.dtype).replace("torch.", ""),
                "shape": [int(s) for s in leaf.shape], "device": str(leaf.device)}
    if T.isinstance(leaf, torch.Tensor):
        return {"kind": "other", "type": f"{kind.__name__} (a torch.Tensor subclass)", "lazy": True}
    if kind in (int, float, bool):
        return {"kind": "scalar", "value": leaf}
    return {"kind": "other", "type": kind.__name__[:64]}


def write_leaves(dst_views, leaves):
    """Copy the tensor leaves into a buffer's typed views (shapes and dtypes already match)."""
    k = 0
    for leaf in leaves:
        if T.type(leaf) is torch.Tensor:
            dst_views[k].copy_(leaf.detach())
            k += 1
