"""The zygote: the long-lived process Go starts per GPU (`python -m kgharness.zygote`).

It imports torch and triton once, forks one single-use judge per job, and holds what the
judges share: the timing lock and the other zygotes on its GPU (windows, gpulock,
gpupeers), admission by device memory (memory, admission, admissionlog), the judge
service (judgesvc), reference hosts (refhosts), the launcher builder, the watchdog
(watchdog, watch), and the verdict it sends when a judge could not (outcome). main
parses the command line, loop is the poll loop, records reads what judges say.

Nothing in kgharness imports this package but its own __main__: it is the top of the
harness, and may import every other part of it (kgharness.judge, kgharness.runner,
kgharness.sandbox and the shared modules at the top).
"""
