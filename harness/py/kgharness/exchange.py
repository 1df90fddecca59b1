"""Exchange buffers: memory the judge owns and lends to one runner for its outputs.

A runner writes the output leaves of a call into a buffer; the judge reads them there,
in its own process, and compares them with what it trusts. On a GPU a buffer is one
cuMemAlloc allocation of its own (never a slice of the caching allocator's segments,
whose IPC handle would expose neighbouring tensors), exported with a CUDA IPC handle;
on a CPU it is a memfd, passed over the channel as a file descriptor. Either way the
runner sees a plain uint8 torch tensor and the judge keeps its own mapping.

A layout places the tensor leaves of an output spec in a buffer: each at an offset
aligned to 256 bytes, in order. Judge and runner compute it from the same spec with
`layout()`, so nothing about placement travels or can be forged.
"""

import ctypes
import itertools
import mmap
import os

import torch

ALIGN = 256
_DTYPES = {str(d).replace("torch.", ""): d for d in (
    torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
    torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64, torch.complex128)}


def dtype_of(name):
    return _DTYPES.get(name)


def dtype_name(dt):
    return str(dt).replace("torch.", "")


def layout(spec):
    """[(offset, dtype, shape, nbytes)] for the tensor leaves of spec, and the total size."""
    out, off = [], 0
    for leaf in spec:
        if leaf.get("kind") != "tensor":
            continue
        dt = dtype_of(leaf["dtype"])
        n = 1
        for s in leaf["shape"]:
            n *= s
        nbytes = n * torch.empty((), dtype=dt).element_size()
        off = (off + ALIGN - 1) // ALIGN * ALIGN
        out.append((off, dt, tuple(leaf["shape"]), nbytes))
        off += nbytes
    return out, max(off, 1)


def views(u8, lay):
    """Typed tensors over a uint8 buffer, one per layout entry."""
    return [u8[off:off + nbytes].view(dt).view(shape) if nbytes else torch.empty(shape, dtype=dt, device=u8.device)
            for off, dt, shape, nbytes in lay]


# ---- CUDA driver API (ctypes): the judge allocates, runners map ----------------------
class _IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]   # CUipcMemHandle, passed by value


_cuda = None


def _driver():
    global _cuda
    if _cuda is None:
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_IpcHandle), ctypes.c_uint64]
        lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), _IpcHandle, ctypes.c_uint]
        lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
        _cuda = lib
    return _cuda


def _check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUDA driver error {rc}")


class _CAI:
    """Lets torch.as_tensor wrap a raw device pointer without a copy."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None}


def _wrap_device(ptr, nbytes, device):
    t = torch.as_tensor(_CAI(ptr, nbytes), device=device)
    if t.data_ptr() != ptr:
        raise RuntimeError("torch copied an exchange buffer instead of wrapping it")
    return t


class Buffer:
    """One exchange buffer in the judge: `u8` is the judge's view of it."""

    def __init__(self, bid, u8, handle, fds=(), release=None):
        self.id, self.u8, self.handle, self.fds = bid, u8, handle, list(fds)
        self._release = release

    def close(self):
        self.u8 = None
        if self._release is not None:
            self._release()
            self._release = None


class Pool:
    """The judge's exchange buffers, by mode: 'gpu' (CUDA IPC) or 'cpu_interpreter' (memfd)."""

    def __init__(self, mode, device):
        self.mode, self.device = mode, device
        self.buffers = {}
        self._ids = itertools.count(1)

    def alloc(self, nbytes):
        nbytes = max(int(nbytes), 1)
        bid = next(self._ids)
        if self.mode == "gpu":
            lib = _driver()
            torch.cuda.synchronize()     # the primary context is current on this thread
            ptr = ctypes.c_uint64()
            _check(lib.cuMemAlloc_v2(ctypes.byref(ptr), nbytes), "cuMemAlloc")
            h = _IpcHandle()
            rc = lib.cuIpcGetMemHandle(ctypes.byref(h), ptr.value)
            if rc != 0:
                lib.cuMemFree_v2(ptr.value)
                _check(rc, "cuIpcGetMemHandle")
            u8 = _wrap_device(ptr.value, nbytes, self.device)
            buf = Buffer(bid, u8, {"kind": "cuda_ipc", "size": nbytes, "handle": bytes(h).hex()},
                         release=lambda p=ptr.value: lib.cuMemFree_v2(p))
        else:
            fd = os.memfd_create(f"kg-exchange-{bid}", os.MFD_CLOEXEC)
            os.ftruncate(fd, nbytes)
            mm = mmap.mmap(fd, nbytes)
            u8 = torch.frombuffer(mm, dtype=torch.uint8)

            def release(mm=mm, fd=fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            buf = Buffer(bid, u8, {"kind": "memfd", "size": nbytes}, fds=[fd], release=release)
        self.buffers[bid] = buf
        return buf

    def close(self):
        for buf in self.buffers.values():
            try:
                buf.close()
            except Exception:
                pass
        self.buffers.clear()


def attach(handle, fds, device):
    """The runner's side: a uint8 tensor over a buffer the judge lent it."""
    size = int(handle["size"])
    if handle["kind"] == "cuda_ipc":
        lib = _driver()
        torch.cuda.synchronize()
        ptr = ctypes.c_uint64()
        h = _IpcHandle.from_buffer_copy(bytes.fromhex(handle["handle"]))
        _check(lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), h, 1), "cuIpcOpenMemHandle")
        return _wrap_device(ptr.value, size, device)
    if handle["kind"] == "memfd":
        if len(fds) != 1:
            raise RuntimeError("a memfd buffer arrived without its file descriptor")
        mm = mmap.mmap(fds[0], size)
        os.close(fds[0])
        return torch.frombuffer(mm, dtype=torch.uint8)
    raise RuntimeError(f"unknown buffer kind {handle['kind']!r}")


def detach(u8):
    """The runner's side: let a buffer from attach() go. On a GPU the IPC mapping is
    closed (the judge service's free of the buffer takes effect only once every mapping
    is); a memfd's mapping goes with the tensor's last reference."""
    if u8.is_cuda:
        torch.cuda.synchronize()
        _check(_driver().cuIpcCloseMemHandle(u8.data_ptr()), "cuIpcCloseMemHandle")
