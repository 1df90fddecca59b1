"""evaluate(job, ctx) -> verdict: the zygote's default evaluator (`--evaluator`).

The evaluation itself lives in kgharness.judge: a judge process that decides the
verdict and two runner processes that run the task's and the candidate's code.
"""

from .judge import evaluate  # noqa: F401
