"""The judge: the process of an evaluation that decides its verdict (flow.evaluate is the
zygote's evaluator), and the judge's side of everything it uses.

process is the judge process from fork() to its verdict record (its pipes to the zygote:
context.Context, process.PipeContext); flow sequences the stages; talk reads the runners'
replies; trials, refscreens and specs run the correctness trials; window, timedcalls and
quiet time reference and candidate; bufferops and refstore hold the buffers and the shared
reference work (in the judge service on a GPU); sharing, hostproc, devicememory and
reservation are its part of reference sharing, reference hosts and admission; checks and
taskcheck decide the rest.

Imported by kgharness.zygote (which forks judges and runs the judge service); imports
kgharness.runner (to fork runners and read tasks), kgharness.sandbox and the shared
modules at the top, never kgharness.zygote.
"""
