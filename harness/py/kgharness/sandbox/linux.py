"""The Linux interface the sandbox's walls are built from, shared by the modules that
build them (mounts, procfs, landlock, uidrop, sandbox).

Raw syscalls through ctypes, because the GPU image has no package manager and no
sandbox tool. One libc handle, opened with use_errno, so that every wall reports the
errno of its own failed call; the flag and syscall numbers sit together so that they
can be checked against the kernel headers in one place.
"""

import ctypes
import os
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_char_p)
libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
CLONE_NEWPID = 0x20000000
PR_GET_CHILD_SUBREAPER = 37
PR_SET_DUMPABLE, PR_CAPBSET_READ, PR_CAPBSET_DROP = 4, 23, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MNT_DETACH = 1 << 18, 1 << 21, 2

# Syscall numbers: Landlock uses the generic table (same on x86_64 and aarch64).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(platform.machine())

# seccomp (the process-group wall, kgharness.sandbox.pgroup): the native architecture's audit
# value and its setsid/setpgid numbers.
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(platform.machine())
SYS_SETSID = {"x86_64": 112, "aarch64": 157}.get(platform.machine())
SYS_SETPGID = {"x86_64": 109, "aarch64": 154}.get(platform.machine())


def errno_msg(what):
    e = ctypes.get_errno()
    return f"{what}: {os.strerror(e)}"
