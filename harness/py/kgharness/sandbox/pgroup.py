"""The process-group wall: a runner and everything it forks stay in the runner's process
group.

The judge stops one runner while the other is timed (SIGSTOP to the runner's group,
kgharness.runner.spawn), and the zygote kills an evaluation by group. A candidate that forked a
helper and gave it a session of its own (setsid, setpgid) kept that helper running while
its runner was stopped: during the reference's timed calls, where its GPU or CPU work
would slow the reference and raise the candidate's speedup. A seccomp filter makes both
calls fail with EPERM in the runner and every process it forks (filters are inherited
and cannot be removed). Calls of another ABI than the native one (x86-64's i386 and x32
entries) fail the same way: their numbers differ, and honest code never makes them.
"""

import ctypes
import errno

from .linux import (AUDIT_ARCH, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                    SYS_SETPGID, SYS_SETSID, errno_msg, libc)

_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_X32_BIT = 0x40000000


class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]


def program():
    """The filter: seccomp_data.nr at offset 0, .arch at 4; jumps count from the next
    instruction."""
    deny = _RET_ERRNO | errno.EPERM
    return [
        (_LD_W_ABS, 0, 0, 4),               # 0: arch
        (_JEQ_K, 0, 5, AUDIT_ARCH),         # 1: another ABI -> 7
        (_LD_W_ABS, 0, 0, 0),               # 2: nr
        (_JSET_K, 3, 0, _X32_BIT),          # 3: x32 -> 7
        (_JEQ_K, 2, 0, SYS_SETSID),         # 4: setsid -> 7
        (_JEQ_K, 1, 0, SYS_SETPGID),        # 5: setpgid -> 7
        (_RET_K, 0, 0, _RET_ALLOW),         # 6
        (_RET_K, 0, 0, deny),               # 7
    ]


def apply_keep_group():
    """Install the filter in the calling process: (True, "") or (False, why)."""
    if None in (AUDIT_ARCH, SYS_SETSID, SYS_SETPGID):
        return False, "process-group wall: no syscall numbers for this architecture"
    insns = program()
    arr = (_Insn * len(insns))(*[_Insn(*i) for i in insns])
    prog = _Prog(len(insns), arr)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False, errno_msg("prctl(NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return False, errno_msg("prctl(SECCOMP)")
    return True, ""
