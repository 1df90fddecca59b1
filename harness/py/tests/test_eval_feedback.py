"""feedback.py (signatures, tracebacks, classification) and screen.py, without evaluation."""

import ast
import os

import pytest

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere

from kgharness.judge import screen  # noqa: E402
from kgharness.runner import feedback  # noqa: E402


def _raise(src, filename):
    try:
        exec(compile(src, filename, "exec"), {})
    except BaseException as e:  # noqa: BLE001
        return e
    raise AssertionError("no exception")


def test_error_signature_stable_across_names_and_numbers():
    a = _raise("x = [1, 2, 3]\nx[5]", "/tmp/kg_a/cand_1.py")
    b = _raise("yy = [1, 2]\nyy[17]", "/tmp/kg_b/cand_2.py")
    assert feedback.error_signature(a) == feedback.error_signature(b) == "IndexError: list index out of range"
    a = _raise("foo_block", "/tmp/a.py")
    b = _raise("bar_size_2", "/tmp/b.py")
    assert feedback.error_signature(a) == feedback.error_signature(b) == "NameError: name <name> is not defined"
    a = RuntimeError("shape '[64, 128]' is invalid for input of size 4096 at 0x7f00aa /tmp/x/y.py")
    b = RuntimeError("shape '[3, 5]' is invalid for input of size 15 at 0xdeadbeef /work/z.py")
    assert feedback.error_signature(a) == feedback.error_signature(b)
    assert "<n>" in feedback.error_signature(a) and "4096" not in feedback.error_signature(a)


def test_compilation_error_signature_and_classification():
    from triton.compiler.errors import CompilationError
    node = ast.parse("x = undefined_thing + 1").body[0].value
    node.lineno, node.col_offset = 4, 11
    e1 = CompilationError("def k(a):\n    pass\n    pass\n    x = undefined_thing + 1", node,
                          "name 'undefined_thing' is not defined")
    node.lineno = 9
    e2 = CompilationError("src", node, "name 'other' is not defined")
    assert feedback.error_signature(e1) == "CompilationError: at <n>:<n>: name <name> is not defined"
    assert feedback.error_signature(e1) == feedback.error_signature(e2)
    assert feedback.classify(e1) == ("compile_error", None)
    wrapped = RuntimeError("launch failed")
    wrapped.__cause__ = e1
    assert feedback.classify(wrapped)[0] == "compile_error"


def test_classify_statuses():
    import errno
    assert feedback.classify(ValueError("x")) == ("runtime_error", None)
    assert feedback.classify(ValueError("x"), during_import=True) == ("compile_error", None)
    assert feedback.classify(MemoryError()) == ("resource_limit", None)
    assert feedback.classify(OSError(errno.EFBIG, "File too large")) == ("resource_limit", None)
    assert feedback.classify(SystemExit(0)) == ("runtime_error", "exit")


def test_clean_traceback_keeps_only_candidate_frames(tmp_path):
    path = str(tmp_path / "cand.py")
    with open(path, "w") as f:
        f.write("def f():\n    return 1 / 0\n")
    ns = {}
    exec(compile(open(path).read(), path, "exec"), ns)
    try:
        ns["f"]()
    except ZeroDivisionError as e:
        text = feedback.clean_traceback(e, path)
    assert 'File "candidate.py", line 2, in f' in text and "return 1 / 0" in text
    assert "ZeroDivisionError: division by zero" in text
    assert __file__ not in text and path not in text


def test_screen_flags_suspicious_constructs():
    code = (
        "import gc, threading\nimport torch, triton.language as tl\nimport sys\n"
        "torch.allclose = lambda *a: True\n"
        "setattr(torch, 'equal', None)\n"
        "s = torch.cuda.Stream()\n"
        "f = torch.compile(lambda x: x)\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        "cache = {}\nv = cache[x.data_ptr()]\n"
        "fr = sys._getframe(1).f_back\n"
        "def k(a, b):\n    return tl.dot(a, b)\n"
    )
    w = " | ".join(screen.screen(code))
    for needle in ("gc", "threading", "torch.allclose", "setattr on module torch", "stream",
                   "torch.compile", "allow_tf32", "data_ptr", "_getframe", "f_back", "tl.dot without"):
        assert needle in w, (needle, w)


def test_screen_quiet_on_honest_code():
    code = open(os.path.join(os.path.dirname(__file__), "eval_fixtures", "cand_matmul_bias.py")).read()
    assert screen.screen(code) == []
    assert screen.screen("this is not python (") == []


def test_device_oom_and_the_request_that_failed():
    from kgharness.runner import feedback

    class OutOfMemoryError(RuntimeError):
        pass
    e = OutOfMemoryError("CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a total capacity "
                         "of 139.81 GiB of which 100.00 GiB is free.")
    assert feedback.is_device_oom(e) and feedback.oom_request_bytes(e) == 200 << 30
    host = MemoryError("cannot allocate")
    assert not feedback.is_device_oom(host) and feedback.oom_request_bytes(host) == 0


@pytest.mark.parametrize("exc", [
    # torch 2.11 on an H100 shared by six zygotes: a reference's library workspace
    type("AcceleratorError", (RuntimeError,), {})("CUDA error: out of memory\nCUDA kernel errors might be "
                                                  "asynchronously reported"),
    RuntimeError("cuMemAlloc failed with CUDA driver error 2"),
    RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
    RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"),
    # the same H100: a reference that could not make its context
    type("AcceleratorError", (RuntimeError,), {})("CUDA error: CUDA-capable device(s) is/are busy or "
                                                  "unavailable"),
], ids=["accelerator", "driver", "cublas", "cudnn", "no-context"])
def test_every_way_a_gpu_says_it_is_full(exc):
    assert feedback.is_device_oom(exc)


def test_errors_that_are_not_a_full_gpu():
    for e in (RuntimeError("CUDA error: an illegal memory access was encountered"),
              RuntimeError("cuMemAlloc failed with CUDA driver error 20"),
              RuntimeError("triton: out of resource: shared memory, Required: 262144")):
        assert not feedback.is_device_oom(e), e


class _Judge:
    """What RunnerTalk.device_oom reads and decides on: the judge's memory grant and its
    three endings (each ends the evaluation, as Judge's do)."""

    class Ended(Exception):
        pass

    def __init__(self, alone):
        self.memory = type("Memory", (), {"alone": alone})()
        self.stage_name = "trials"
        self.ending = None

    def task_fail(self, why):
        self.ending = ("task_error", why)
        raise self.Ended

    def retry(self, reason, why):
        self.ending = ("retry", reason)
        raise self.Ended


def _oom(alone, role, share, cap=0.5):
    from kgharness.judge.talk import RunnerTalk
    j = _Judge(alone)
    try:
        RunnerTalk(j).device_oom(type("Runner", (), {"role": role})(), {"own_share": share, "cap": cap})
    except _Judge.Ended:
        pass
    return j.ending


def test_an_out_of_memory_error_is_retried_only_when_other_work_may_have_caused_it():
    # Beside other work, below its cap: the GPU was full of others' memory. Retried.
    assert _oom(alone=False, role="candidate", share=0.01) == ("retry", "gpu_oom")
    assert _oom(alone=False, role="reference", share=None) == ("retry", "gpu_oom")
    # At its cap: its own failure, as it reported (nothing decided here).
    assert _oom(alone=False, role="candidate", share=0.49) is None
    # With the GPU to itself, whatever it says it held: its own failure. A candidate that
    # raises a made-up out-of-memory error is not retried into an evaluation that does
    # not count.
    assert _oom(alone=True, role="candidate", share=0.01) is None
    # The reference alone: the task does not fit this GPU.
    assert _oom(alone=True, role="reference", share=None)[0] == "task_error"
