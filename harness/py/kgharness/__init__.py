"""kgharness: the Python evaluator that runs inside kernelgate's sandboxed children.

Only torch and triton are imported; everything here runs either in the warm
zygote (before any candidate code exists) or in a single-use child.
See docs/protocol.md for the boundary with the Go supervisor.

Four rooms, each importing only those after it: zygote (the process Go starts),
judge (decides a verdict), runner (runs task and candidate code), sandbox (the walls).
The modules at this level are what every process of an evaluation shares and they
import nothing below them: the records between processes (protocol: Go and the zygote;
pipe: a judge and the zygote; channel and exchange: a judge and its runners), the job's
options, the verdict, process accounting (procs), and the trusted code both the judge
and the runners run on tensors (snapshot, guards, inputs, timing, correctness,
comparekernel). The guards, inputs, timing, channel and correctness keep their names
here: the reward-hack fixtures in harness/testdata/hacks reach them through sys.modules.
"""

HARNESS_VERSION = "0.2.0"
PROTOCOL = "1.4"          # MAJOR.MINOR of the process protocol (1.1: job.task_check, 1.2: job.check,
                          # 1.3: options require_triton, cpu_timing; the judge/runner split;
                          # 1.4: option compile_timeout_s, the judge's compiled record)
PROTOCOL_MAJOR = 1
SCHEMA_VERSION = "1.7"    # verdict schema (1.1: flags forge, no_triton; wall_check; 1.2: compile_timeout;
#                           1.3: reference_shared; 1.4: tolerance source "task";
#                           1.5: task_info.reference_error; 1.6: reference_error.held;
#                           1.7: reference_checked)
