"""What the kernel enforces on the harness's two processes: no /proc for the scorer, no new
process for the bundle, and a scorer the bundle cannot signal.

Only ctypes and the standard library (no torch): gate.py uses it too, and the image has no
libseccomp, so the seccomp program is classic BPF built here.

- `make_undumpable` (the scorer, the gate): PR_SET_DUMPABLE 0 closes the process's /proc
  entries (environ, mem, maps, fd) and ptrace to every process without CAP_SYS_PTRACE, which
  the container has not. Called before any secret is read.
- `forbid_new_processes` (the bundle's process, before any bundle code is imported): a seccomp
  filter refusing execve/execveat (EPERM), fork/vfork (EPERM), clone unless it makes a thread
  (CLONE_THREAD in its flags; EPERM otherwise), and clone3 (ENOSYS, so glibc's pthread_create
  falls back to clone, where the flags can be checked: clone3's are behind a pointer). A
  process can only add filters, never remove one, and every thread and child inherits them.
  Syscalls of another ABI (i386 `int 0x80`, x32) are refused outright: their numbers differ.
- `ignore_signals_as_init` (the scorer): the kernel delivers to a pid namespace's init only
  the signals it has a handler for, when they come from inside the namespace (SIGKILL and
  SIGSTOP included). Python installs one handler, SIGINT's; resetting it to the default leaves
  the bundle no signal that reaches the scorer when the scorer is the container's PID 1.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal
import struct

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
CLONE_THREAD = 0x00010000

# Per architecture: the AUDIT_ARCH value seccomp_data.arch carries, and the syscall numbers.
_ARCHES = {
    "x86_64": {
        "audit": 0xC000003E,
        "seccomp": 317,
        "execve": 59,
        "execveat": 322,
        "fork": 57,
        "vfork": 58,
        "clone": 56,
        "clone3": 435,
        # x32 shares AUDIT_ARCH_X86_64 and sets this bit in the number: refused outright.
        "foreign_from": 0x40000000,
    },
    "aarch64": {
        # No fork or vfork on arm64: glibc makes both with clone.
        "audit": 0xC00000B7,
        "seccomp": 277,
        "execve": 221,
        "execveat": 281,
        "clone": 220,
        "clone3": 435,
    },
}

# Classic BPF (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian).
_NR, _ARCH, _ARG0_LOW = 0, 4, 16


class SandboxError(OSError):
    """The kernel refused a protection the harness requires: the run must not go on."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def make_undumpable() -> None:
    """PR_SET_DUMPABLE 0: this process's /proc entries and ptrace are closed to the bundle's uid."""
    if _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SandboxError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def ignore_signals_as_init() -> None:
    """No handler the bundle could trigger: as PID 1, nothing it sends then reaches this process."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _arch() -> dict[str, int]:
    machine = platform.machine()
    if machine not in _ARCHES:
        raise SandboxError(errno.ENOSYS, f"no seccomp filter for the architecture {machine}")
    return _ARCHES[machine]


def process_filter(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The seccomp program as (code, jt, jf, k) instructions, for this or the named architecture."""
    arch = _ARCHES[machine] if machine else _arch()
    refused = [arch[name] for name in ("execve", "execveat", "fork", "vfork") if name in arch]
    eperm, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    # Jumps are relative and forward only: the three returns sit at the end, and each check
    # jumps to its return by counting what is left between them.
    body: list[tuple[str, int, object, object]] = [("ld", _ARCH, None, None), ("jeq", arch["audit"], None, "eperm")]
    body.append(("ld", _NR, None, None))
    if "foreign_from" in arch:
        body.append(("jge", arch["foreign_from"], "eperm", None))
    body += [("jeq", number, "eperm", None) for number in refused]
    body.append(("jeq", arch["clone3"], "enosys", None))
    body.append(("jeq", arch["clone"], None, "allow"))
    body.append(("ld", _ARG0_LOW, None, None))
    body.append(("jset", CLONE_THREAD, "allow", "eperm"))
    returns = {"allow": _RET_ALLOW, "eperm": eperm, "enosys": enosys}
    where = {name: len(body) + index for index, name in enumerate(returns)}
    codes = {"ld": _LD_W_ABS, "jeq": _JEQ_K, "jge": _JGE_K, "jset": _JSET_K}
    program = []
    for index, (op, k, true, false) in enumerate(body):
        def jump(target: object) -> int:
            return 0 if target is None else where[str(target)] - index - 1

        program.append((codes[op], jump(true) if op != "ld" else 0, jump(false) if op != "ld" else 0, k))
    program += [(_RET_K, 0, 0, value) for value in returns.values()]
    return program


def forbid_new_processes() -> None:
    """Install the filter on every thread of this process (TSYNC); threads stay possible."""
    arch = _arch()
    program = process_filter()
    raw = b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program), ctypes.addressof(buffer))
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SandboxError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS, 1) failed")
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(
        ctypes.c_long(arch["seccomp"]),
        ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
        ctypes.c_uint(SECCOMP_FILTER_FLAG_TSYNC),
        ctypes.byref(fprog),
    )
    if result != 0:
        # With TSYNC a positive result is the id of a thread that could not be synchronised.
        raise SandboxError(ctypes.get_errno() or errno.EAGAIN, f"seccomp(SET_MODE_FILTER) failed ({result})")




def _status(pid: int | str) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        return {key: value.strip() for key, value in (line.split(":", 1) for line in handle if ":" in line)}


def cannot_start_processes(pid: int) -> bool:
    """The kernel's word that `pid` installed a seccomp filter of its own, with no_new_privs.

    The scorer asks before it serves the bundle's process: that process is untrusted, so the
    filter it installs on itself is checked from outside (/proc/<pid>/status is the kernel's).
    The container's runtime has a filter of its own (Docker's default profile), which both
    processes share, so the child must hold one more than this process. Kernels before 5.9 do
    not count filters: there, any filter with no_new_privs passes.
    """
    try:
        mine, theirs = _status("self"), _status(pid)
    except OSError:
        return False
    if theirs.get("Seccomp") != "2" or theirs.get("NoNewPrivs") != "1":
        return False
    if "Seccomp_filters" not in mine:
        return True
    return int(theirs.get("Seccomp_filters", "0")) > int(mine["Seccomp_filters"])
