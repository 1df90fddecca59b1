"""The runners: the processes that run task and candidate code for a judge (spawn forks
one; handler answers the judge's requests), and what they use: loader (importing a task
and a submission), precompile and launchers (compiling the candidate's kernels before
admission), warmup (the trusted Triton cache), taskinfo and exactness (a task's shapes
and its distance from the exact answer), feedback (a failure as the verdict words it).

Imported by kgharness.judge and kgharness.zygote; imports kgharness.sandbox and the shared
modules at the top, never the judge or the zygote: a runner holds no decision.
"""
