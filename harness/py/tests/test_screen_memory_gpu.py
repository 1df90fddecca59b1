"""On a GPU, the judge service's screens hold no temporary the size of an output, and its
allocator gives cached memory back (kgharness.zygote.judgesvc.trim_cache): admission counts the
service's buffers, not its cache. In a child process, since the test workers of the GPU
suite fork judges and must not initialise CUDA themselves."""

import json
import os
import subprocess
import sys

import pytest

if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.skip("GPU tests need compiled Triton (TRITON_INTERPRET unset)", allow_module_level=True)
os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
import torch  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

CHILD = r"""
import json, torch
from kgharness import correctness as C
from kgharness.zygote import judgesvc
t = torch.randn(1 << 28, device="cuda", dtype=torch.bfloat16)     # 512 MiB
torch.cuda.synchronize()
torch.cuda.reset_peak_memory_stats()
held = torch.cuda.memory_allocated()
screens = (C.nonfinite([t]), C.near_constant([t], {"atol": 1e-2, "rtol": 1.6e-2}))
extra = torch.cuda.max_memory_allocated() - held
x = torch.empty(3 << 30, dtype=torch.uint8, device="cuda")
del x
before = torch.cuda.memory_reserved()
judgesvc.trim_cache()
print(json.dumps({"screens": screens, "extra": extra, "before": before,
                  "after": torch.cuda.memory_reserved(), "held": torch.cuda.memory_allocated()}))
"""


def test_screens_and_the_cache_on_the_device():
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["screens"] == [False, False]
    assert r["extra"] < 16 << 20, r                  # was 4 GiB and more (a float64 copy)
    assert r["before"] >= r["held"] + (3 << 30), r   # the freed 3 GiB, cached
    assert r["after"] - r["held"] <= judgesvc_slack(), r


def judgesvc_slack():
    from kgharness.zygote import judgesvc
    return judgesvc.CACHE_SLACK
