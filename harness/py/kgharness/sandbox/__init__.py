"""The sandbox: the walls a judge and its runners put up around themselves before task or
candidate code can run (docs/threat-model.md). walls applies them in order and probes what
this host allows (`python -m kgharness.sandbox` prints the rules); each wall is a module of
its own: mounts (private /tmp and /dev/shm), procfs (a /proc with no other process),
landlock and readpaths (what may be read and written), uidrop (an unprivileged uid, no
capabilities), pgroup (one process group), runenv (no harness setting in the environment),
linux (the syscalls they share).

Imported by kgharness.runner, kgharness.judge and kgharness.zygote; imports only the shared
modules at the top (options, procs).
"""
