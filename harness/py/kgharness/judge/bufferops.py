"""What the judge does with the runners' outputs: the exchange buffers it lends, and
every computation over them (checksums, comparisons, the reference's screens, the
drain probe, the bandwidth floor).

Two implementations of one set of operations, addressed by buffer id and output spec:

- `Local` runs them in the calling process. The judge uses it on a CPU (memfd
  buffers), and the GPU's judge service uses one per connected judge.
- `Remote` asks the GPU's judge service (kgharness.zygote.judgesvc) over a private socket.
  On a GPU the judge then needs no CUDA context of its own: an evaluation is two
  contexts, not three (context creation serialises in the driver: 0.21 s each on the
  H200 at 16 at once, the bound on throughput that this halves for the judge's part).

Nothing here ever sees a runner's Python object: buffers hold bytes the judge owns,
and the spec that types them was checked by the judge (kgharness.judge.trials).
"""

import os
import time

import torch

from .. import channel, exchange, timing
from .. import correctness as C
from . import refstore

# Every operation a judge may ask (Local's methods of these names; the judge service,
# kgharness.zygote.judgesvc, runs them for Remote).
OPS = ("alloc", "fingerprint", "checks", "compare", "nonfinite", "tolerance", "near_constant", "snapshot",
       "differ", "accumulate", "mean_within", "drop", "drain", "bandwidth", "held_bytes", "info",
       "window", "has_shared", "shared", "share", "share_before", "before")
DRAIN_MAX_S = 3.0
DRAIN_IDLE_MS = 0.5       # a ~10 us spin that takes longer is sharing the GPU
_RES_FLOATS = ("max_abs", "max_rel", "scaled", "worst_ratio")


class OpError(Exception):
    """An operation failed; `oom` when the device was out of memory."""

    def __init__(self, msg, oom=False):
        super().__init__(msg)
        self.oom = oom


def leaves(u8, spec):
    """The judge's view of a runner's outputs: typed tensors over its buffer, numbers."""
    lay, _ = exchange.layout(spec)
    views = exchange.views(u8, lay)
    out, k = [], 0
    for leaf in spec:
        if leaf["kind"] == "tensor":
            out.append(views[k])
            k += 1
        else:
            out.append(leaf.get("value"))
    return out


class Local:
    """The operations in this process."""

    OPS = OPS
    _bw = {}              # device -> bytes per ms, the most any measurement here gave

    def __init__(self, mode, device):
        self.mode, self.device, self.gpu = mode, device, mode == "gpu"
        self.pool = exchange.Pool(mode, device)
        self.kept = {}    # id -> leaves copied out of a buffer (snapshot, accumulate)
        self.pinned = set()   # ids in kept that are the shared store's (not this judge's memory)
        self._next = 1 << 30

    # ---- buffers ------------------------------------------------------------------
    def alloc(self, size):
        """(id, handle for the runner, fds that travel with it: the caller's to close)."""
        buf = self.pool.alloc(size)
        return buf.id, buf.handle, [os.dup(fd) for fd in buf.fds]

    def _leaves(self, bid, spec):
        if bid in self.kept:
            return self.kept[bid]
        buf = self.pool.buffers.get(bid)
        if buf is None:
            raise OpError(f"no buffer {bid}")
        return leaves(buf.u8, spec)

    def _keep(self, items):
        self._next += 1
        self.kept[self._next] = items
        return self._next

    def info(self):
        if not self.gpu:
            return {}
        return {"gpu_name": torch.cuda.get_device_name(0),
                "capability": list(torch.cuda.get_device_capability(0))}

    def held_bytes(self):
        own = sum(b.handle["size"] for b in self.pool.buffers.values())
        return own + sum(t.numel() * t.element_size() for i, ls in self.kept.items() if i not in self.pinned
                         for t in ls if isinstance(t, torch.Tensor))

    def close(self):
        refstore.STORE.release(self)
        self.kept.clear()
        self.pool.close()

    # ---- over buffers -------------------------------------------------------------------
    def fingerprint(self, bid):
        buf = self.pool.buffers.get(bid)
        if buf is None:
            raise OpError(f"no buffer {bid}")
        return C.fingerprint(buf.u8)

    def compare(self, out_id, out_spec, ref_id, ref_spec, tol):
        return C.compare(self._leaves(out_id, out_spec), self._leaves(ref_id, ref_spec), tol)

    def checks(self, fp_ids, compare=None, after=()):
        """The judge's work between two calls as one request: the checksums of fp_ids, in
        order, then (when given: compare()'s arguments) one comparison, then the checksums
        of `after` (what the comparison read must not have changed meanwhile). On the H200
        each request to the service cost 0.7-1.1 ms of a window in which every other
        evaluation is stopped, and a pair made five. The checksums are queued and read in
        one transfer after the comparison: outside a window every wait for the GPU waits
        for this context's turn among the other evaluations' (kgharness.runner.calls.Calls.call)."""
        def parts(bid):
            buf = self.pool.buffers.get(bid)
            if buf is None:
                raise OpError(f"no buffer {bid}")
            return C.fingerprint_parts(buf.u8)
        first = [parts(b) for b in fp_ids]
        res = self.compare(*compare) if compare is not None else None
        then = [parts(b) for b in after]
        flat = [t for p in first + then for t in p]
        vals = torch.stack(flat).tolist() if flat else []
        sums, k = [], 0
        for p in first + then:
            sums.append(sum(vals[k:k + len(p)]))
            k += len(p)
        return {"fps": sums[:len(first)], "compare": res, "after": sums[len(first):]}

    def nonfinite(self, bid, spec):
        return C.nonfinite(self._leaves(bid, spec))

    def tolerance(self, bid, spec, atol=None, rtol=None, task=None):
        return C.tolerance(self._leaves(bid, spec), {"atol": atol, "rtol": rtol}, task)

    def near_constant(self, bid, spec, tol):
        return C.near_constant(self._leaves(bid, spec), tol)

    def snapshot(self, bid, spec):
        """A copy of a buffer's leaves that later writes cannot touch: its id."""
        return self._keep([t.clone() if isinstance(t, torch.Tensor) else t for t in self._leaves(bid, spec)])

    def differ(self, a_id, b_id, spec, tol):
        return C.differ(self._leaves(a_id, spec), self._leaves(b_id, spec), tol)

    def accumulate(self, acc_id, bid, spec):
        """Add a buffer's floating leaves (as float32) into acc_id (None: a new sum): its id.
        Chunk by chunk: beside the sum, no float32 copy of a whole output (the service's
        temporaries are outside every reservation)."""
        mine = _floats(self._leaves(bid, spec))
        if acc_id is None:
            acc_id = self._keep([torch.zeros(t.shape, dtype=torch.float32, device=t.device) for t in mine])
        for a, t in zip(self.kept[acc_id], mine):
            for _, (ac, tc) in C.chunks(a, t):
                ac.add_(tc.float())
        return acc_id

    def mean_within(self, acc_id, n, bid, spec, tol):
        """The sum in acc_id divided by n is within tolerance of the buffer's floating
        leaves (chunk by chunk, as accumulate)."""
        for a, t in zip(self.kept[acc_id], _floats(self._leaves(bid, spec))):
            for _, (ac, tc) in C.chunks(a, t):
                if not C.compare([(ac / n).to(t.dtype)], [tc], tol)["ok"]:
                    return False
        return True

    def drop(self, bid):
        self.kept.pop(bid, None)

    # ---- the shared reference work (kgharness.judge.refstore) ---------------------------------
    def has_shared(self, key):
        """{"enabled": sharing is on here, "exists": the store holds key now}: nothing is
        kept for this judge (an entry it held could not be evicted through its whole wait
        for memory; shared() takes it once admitted)."""
        store = refstore.STORE
        return {"enabled": store.enabled(), "exists": store.enabled() and store.has(key)}

    def shared(self, key):
        """{"enabled": sharing is on here, "entry": what the store holds for key or None};
        the entry's outputs are kept for this judge under the ids it lists (seed_ids,
        held_ids), like snapshots."""
        store = refstore.STORE
        got = store.get(key, owner=self) if store.enabled() else None
        if got is None:
            return {"enabled": store.enabled(), "entry": None, "publish": store.claim(key, self)}
        desc, seeds, held = got
        seed_ids, held_ids = [self._keep(ls) for ls in seeds], [self._keep(ls) for ls in held]
        self.pinned.update(seed_ids + held_ids)
        return {"enabled": True, "entry": dict(desc, seed_ids=seed_ids, held_ids=held_ids)}

    def share(self, key, desc, seed_ids, held_ids):
        """Publish this judge's reference work: the snapshots seed_ids and held_ids (ids of
        snapshot()) move into the store. {"taken": whether the store took them, "bytes" the
        store holds now, "version" of that figure (refstore.Store.version)}."""
        store = refstore.STORE
        if not store.enabled() or any(i not in self.kept for i in list(seed_ids) + list(held_ids)):
            return dict(_held(store), taken=False)
        # On the device: kept in host memory instead, every compare copied a seed's outputs
        # back through this one process, and heavy groups ran at 0.54 evals/s against 0.85
        # with sharing off (H200, eebd4c8).
        seeds = [self.kept.pop(i) for i in seed_ids]
        held = [self.kept.pop(i) for i in held_ids]
        taken = store.put(key, desc, seeds, held)
        return dict(_held(store), taken=taken)

    def share_before(self, key, stats):
        return refstore.STORE.set_before(key, stats)

    def before(self, key):
        """{"before": the reference of key timed alone, published while recent, or None}."""
        return {"before": refstore.STORE.before(key) if refstore.STORE.enabled() else None}

    def window(self, opening):
        """A timing window opens or closes (only the judge service has others to hold off)."""

    # ---- the device -----------------------------------------------------------------------
    def drain(self):
        """Wait until GPU work queued by other evaluations has run out: (ms, quiet)."""
        if not self.gpu:
            return 0.0, True
        t0, quiet = time.monotonic(), 0
        while time.monotonic() - t0 < DRAIN_MAX_S:
            w0 = time.perf_counter()
            torch.cuda._sleep(20_000)
            torch.cuda.synchronize()
            quiet = quiet + 1 if (time.perf_counter() - w0) * 1e3 < DRAIN_IDLE_MS else 0
            if quiet >= 3:
                return round((time.monotonic() - t0) * 1e3, 3), True
        return round((time.monotonic() - t0) * 1e3, 3), False

    def bandwidth(self, again=False):
        """Device bytes per ms (the too_fast floor), measured inside a timing window: once,
        and again when asked (a candidate under the floor). The most any measurement gave
        stands: other work can only slow one down, and one low figure (3.59 TB/s, H200,
        7 x 16 heavy groups) put an honest kernel reading at 4.55 TB/s under the floor of
        every evaluation the service judged after it."""
        if not self.gpu:
            return None
        if again or self.device not in Local._bw:
            bw = timing.bandwidth_bytes_per_ms(self.device)
            Local._bw[self.device] = max(bw, Local._bw.get(self.device, 0.0))
        return Local._bw[self.device]


def _held(store):
    st = store.stats()
    return {"bytes": st["bytes"], "version": st["version"]}


def _inf(res):
    """JSON has no Inf: an infinite error arrives as null."""
    for key in _RES_FLOATS:
        if res.get(key) is None:
            res[key] = float("inf")
    return res


def _floats(ls):
    return [t for t in ls if isinstance(t, torch.Tensor) and t.is_floating_point()]


class Remote:
    """The same operations, asked of the GPU's judge service over `sock` (a SOCK_SEQPACKET
    end the zygote handed this judge). Buffers die with the connection."""

    def __init__(self, sock, timeout_s=300.0):
        self.chan = channel.Channel(sock)
        self.timeout_s = timeout_s

    def _ask(self, op, *a, fds_out=None, **k):
        try:
            seq = self.chan.request(op, a=list(a), k=k)
            rep = self.chan.reply(op, seq, deadline=time.monotonic() + self.timeout_s, fds_out=fds_out)
        except (channel.ChannelClosed, channel.Malformed, TimeoutError) as e:
            raise OpError(f"the judge service did not answer {op}: {e}") from None
        if rep.get("ok") is not True:
            raise OpError(f"judge service, {op}: {str(rep.get('error'))[:300]}", oom=rep.get("oom") is True)
        return rep.get("result")

    def alloc(self, size):
        fds = []
        r = self._ask("alloc", int(size), fds_out=fds)
        return r["id"], r["handle"], fds

    def compare(self, *a, **k):
        return _inf(self._ask("compare", *a, **k))

    def checks(self, fp_ids, compare=None, after=()):
        out = self._ask("checks", list(fp_ids), compare=list(compare) if compare is not None else None,
                        after=list(after))
        if out.get("compare") is not None:
            out["compare"] = _inf(out["compare"])
        return out

    def close(self):
        try:
            self.chan.sock.close()
        except OSError:
            pass

    def __getattr__(self, op):
        if op not in OPS:
            raise AttributeError(op)
        return lambda *a, **k: self._ask(op, *a, **k)
