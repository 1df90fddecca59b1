"""Default tolerances: an honest bf16 kernel two ULPs from the eager reference passes, three
ULPs do not; fp32 keeps 1e-4."""
import torch

from kgharness import correctness as C


def _bf16(v, n=64):
    return torch.full((n,), v, dtype=torch.bfloat16)


def test_bf16_default_admits_two_ulps_at_the_top_of_a_binade():
    ref = _bf16(4.5)                               # one ULP in [4, 8) is 2^-5
    tol = C.tolerance([ref], {})
    assert (tol["atol"], tol["rtol"], tol["dtype"], tol["source"]) == (1e-2, 1.6e-2, "bfloat16", "default")
    assert C.compare([_bf16(4.5 + 2 * 2 ** -5)], [ref], tol)["ok"]
    assert C.compare([_bf16(7.5 - 2 * 2 ** -5)], [_bf16(7.5)], tol)["ok"]
    assert not C.compare([_bf16(4.5 + 3 * 2 ** -5)], [ref], tol)["ok"]


def test_fp32_default_and_request_override():
    ref = torch.full((8,), 4.5)
    tol = C.tolerance([ref], {})
    assert (tol["atol"], tol["rtol"]) == (1e-4, 1e-4)
    assert not C.compare([ref + 1e-3], [ref], tol)["ok"]
    req = C.tolerance([_bf16(1.0)], {"rtol": 0.01})
    assert (req["atol"], req["rtol"], req["source"]) == (1e-2, 0.01, "request")
