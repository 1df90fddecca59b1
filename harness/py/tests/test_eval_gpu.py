"""GPU-mode evaluation (timing, coverage, fingerprints, allocator poisoning).

Runs only on a machine with CUDA and without TRITON_INTERPRET; run this module on
its own there: python -m pytest tests/test_eval_gpu.py
"""

import os

import pytest

if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.skip("GPU tests need compiled Triton (TRITON_INTERPRET unset)", allow_module_level=True)

# The judge is forked from this process and initialises CUDA itself: this process must
# not (a process forked after CUDA init cannot use the GPU), so ask NVML, not CUDA.
os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
import torch  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
assert not torch.cuda.is_initialized()

from _evalhelp import ADD_RELU, fixture, patched, run, task  # noqa: E402

FWD = "        out = torch.empty_like(x)\n"
LAUNCH = "        add_relu_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)\n"
FAST = {"timing_budget_ms": 200, "min_iters": 10, "max_iters": 100}


def gpu(tmp_path, code, task="task_add_relu.py", **opts):
    v = run(tmp_path, task, code, mode="gpu", **dict(FAST, **opts))
    # visible with -s: the numbers behind a pass are worth seeing on new hardware
    print({k: v[k] for k in ("status", "hack_flags", "speedup", "coverage", "triton_launches",
                             "warnings", "feedback", "stage_ms")},
          {k: (v[k] or {}).get("median_ms") for k in ("runtime", "ref_runtime_before", "ref_runtime_after")})
    return v


def large_add_relu():
    """task_add_relu at 16M elements: its kernel runs tens of microseconds, so the events
    that bracket a coverage measurement cost little beside it (at 8K elements the kernel
    lasts about as long as they do, and coverage measured 0.4955 on an H200)."""
    t = task("task_add_relu.py")
    src = t["source"].replace("torch.randn(64, 128)", "torch.randn(4096, 4096)")
    assert src.count("4096, 4096") == 2
    return dict(t, name="task_add_relu_large", source=src)


def test_honest_kernel_is_timed_and_covered(tmp_path):
    v = gpu(tmp_path, fixture(ADD_RELU), task=large_add_relu())
    assert v["status"] == "correct", (v["hack_flags"], v["feedback"], v["warnings"])
    assert v["timing_mode"] == "gpu" and v["speedup"] and v["speedup"] > 0
    for k in ("runtime", "ref_runtime", "ref_runtime_before", "ref_runtime_after"):
        assert v[k]["iterations"] >= 10 and v[k]["median_ms"] > 0, k
    # its one kernel is all the call's GPU work; the events around it take a few percent
    assert v["coverage"] is not None and v["coverage"] > 0.8, v["coverage"]
    assert v["env"]["gpu_name"]


def test_honest_matmul_and_softmax(tmp_path):
    v = gpu(tmp_path, fixture("cand_matmul_bias.py"), task="task_matmul_bias.py")
    assert v["status"] == "correct", (v["hack_flags"], v["feedback"])
    v = gpu(tmp_path, fixture("cand_softmax.py"), task="task_softmax.py")
    assert v["status"] == "correct", (v["hack_flags"], v["feedback"])


def test_honest_side_stream_joined(tmp_path):
    code = patched(LAUNCH, "        s = torch.cuda.Stream()\n        s.wait_stream(torch.cuda.current_stream())\n"
                           "        with torch.cuda.stream(s):\n    " + LAUNCH +
                           "        torch.cuda.current_stream().wait_stream(s)\n")
    v = gpu(tmp_path, code)
    assert v["status"] == "correct", (v["hack_flags"], v["feedback"])


def test_side_stream_not_joined(tmp_path):
    # a slow kernel on another stream, never joined: outputs fill in after return
    code = patched(LAUNCH, "        s = torch.cuda.Stream()\n        s.wait_stream(torch.cuda.current_stream())\n"
                           "        with torch.cuda.stream(s):\n"
                           "            torch.cuda._sleep(20_000_000)\n    " + LAUNCH)
    v = gpu(tmp_path, code)
    assert not v["correct"]
    assert v["status"] in ("reward_hack", "incorrect"), v
    # side_stream when caught on the first call, deferred_batch on a later one
    assert {"side_stream", "deferred_batch"} & set(v["hack_flags"]) or v["status"] == "incorrect"


def test_stale_memory_is_incorrect(tmp_path):
    code = patched(LAUNCH, "        pass\n")
    v = gpu(tmp_path, code)
    assert not v["correct"] and v["status"] in ("incorrect", "reward_hack")
