"""The same-storage trial: a cache keyed by the inputs' address (or shape) is caught every
time, not only when the allocator happens to reuse an address; honest kernels still pass.

On the CPU a kernel that cached its output by x.data_ptr() was judged correct in 19 of 20
runs of two seeds before this trial existed: fresh inputs per trial got fresh addresses.
"""

import json
import os
from pathlib import Path

import pytest
import torch

from kgharness import inputs as I
from zygote_client import ZygoteClient

REPO = Path(__file__).resolve().parents[3]
HACKS = REPO / "harness" / "testdata" / "hacks"
TASK = str(REPO / "datasets" / "ci" / "1_add_relu.py")
MODE = os.environ.get("KERNELGATE_TEST_MODE", "cpu_interpreter")


@pytest.fixture(scope="module")
def zygote():
    with ZygoteClient(mode=MODE) as z:
        yield z


def test_a_pointer_caching_kernel_is_never_correct(zygote):
    code = (HACKS / "cache_by_pointer.py").read_text()
    got = [zygote.evaluate(TASK, code, {"seeds": 2}) for _ in range(20)]
    statuses = [v["status"] for v in got]
    assert statuses.count("correct") == 0, statuses
    # The cached output is the previous trial's, byte for byte: the harness names it.
    assert all(v["status"] == "reward_hack" and "cache" in v["hack_flags"] for v in got), \
        [(v["status"], v["hack_flags"], v["feedback"][:200]) for v in got]
    assert "previous call's input tensors" in got[0]["feedback"], got[0]["feedback"]


# An honest kernel that reports, per call, the address of x and the sum of its values.
WITNESS = (HACKS / "control_honest.py").read_text() + '''
_kg_forward = ModelNew.forward
def _kg_witness(self, x, y):
    print("CALL " + json.dumps([x.data_ptr(), float(x.sum()), list(x.shape)]), flush=True)
    return _kg_forward(self, x, y)
ModelNew.forward = _kg_witness
import json
'''


@pytest.mark.parametrize("seeds", [2, 5])
def test_one_trial_gets_new_values_in_the_previous_calls_tensors(zygote, seeds):
    v = zygote.evaluate(TASK, WITNESS, {"seeds": seeds})
    assert v["status"] == "correct" and v["hack_flags"] == [], (v["status"], v["feedback"][:300])
    calls = [json.loads(ln[5:]) for ln in v["output_tail"].splitlines() if ln.startswith("CALL [")]
    main = [c for c in calls if c[2] == [64, 128]]
    same = [(a, b) for a, b in zip(main, main[1:]) if a[0] == b[0]]
    assert same, calls
    assert all(a[1] != b[1] for a, b in same), same      # the same tensor, new values


def test_refill_writes_new_values_into_the_old_tensors():
    old = [torch.randn(4, 5), [torch.randn(3)], 7]
    new = [torch.randn(4, 5), [torch.randn(3)], 8]
    ptrs = (old[0].data_ptr(), old[1][0].data_ptr())
    got = I.refill(old, new)
    assert got[0] is old[0] and got[1][0] is old[1][0] and got[2] == 8
    assert (got[0].data_ptr(), got[1][0].data_ptr()) == ptrs
    assert torch.equal(got[0], new[0]) and torch.equal(got[1][0], new[1][0])


@pytest.mark.parametrize("old,new", [
    ([torch.zeros(4)], [torch.zeros(5)]),                         # the shape changes with the seed
    ([torch.zeros(4)], [torch.zeros(4, dtype=torch.float64)]),
    ([torch.zeros(4, 2)], [torch.zeros(2, 4).t()]),               # other strides
    ([torch.zeros(1, 4).expand(3, 4)], [torch.ones(1, 4).expand(3, 4)]),  # written-to overlaps
    ([torch.zeros(4)], [torch.zeros(4), torch.zeros(4)]),
    ([torch.zeros(4)], [[torch.zeros(4)]]),
])
def test_refill_gives_up_where_the_inputs_do_not_pair(old, new):
    assert I.refill(old, new) is None
