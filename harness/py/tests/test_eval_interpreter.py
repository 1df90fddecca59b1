"""CPU mode must not reject honest kernels for the interpreter's sake."""

import os

os.environ["TRITON_INTERPRET"] = "1"

from _evalhelp import patched, run  # noqa: E402


def test_runtime_loop_bound_is_correct_in_the_interpreter(tmp_path):
    # LLM kernels loop over a runtime K all the time; numpy 2.4 broke this in
    # Triton 3.6's interpreter (hence the numpy pin in requirements.txt).
    code = patched("K: tl.constexpr,", "K,", name="cand_matmul_bias.py")
    v = run(tmp_path, "task_matmul_bias.py", code)
    assert v["status"] == "correct", (v["status"], v["feedback"])
