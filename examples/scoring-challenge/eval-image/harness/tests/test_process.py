"""The kernel-side protections of harness_process.py, each in a child process of its own."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import threading
import unittest

import harness_process


def in_child(body) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """Run `body()` in a forked child (filters are for life) and return what it answered."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            answer = body()
        except BaseException as error:  # noqa: BLE001
            answer = {"raised": f"{type(error).__name__}: {error}"}
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        data = handle.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def syscall_errno(number: int, *args: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    return 0 if result >= 0 else ctypes.get_errno()


class Filter(unittest.TestCase):
    def test_no_process_can_be_started_but_threads_can(self) -> None:
        def body() -> dict:  # type: ignore[type-arg]
            harness_process.forbid_new_processes()
            out: dict[str, object] = {}
            try:
                os.fork()
                out["fork"] = "started"
            except OSError as error:
                out["fork"] = error.errno
            try:
                os.posix_spawn("/bin/true", ["true"], {})
                out["posix_spawn"] = "started"
            except OSError as error:
                out["posix_spawn"] = error.errno
            try:
                os.execv("/bin/true", ["true"])
            except OSError as error:
                out["execv"] = error.errno
            ran = []
            thread = threading.Thread(target=lambda: ran.append(True))
            thread.start()
            thread.join()
            out["thread"] = ran == [True]
            arch = harness_process._ARCHES[platform.machine()]
            # clone3 answers ENOSYS (glibc then falls back to clone); clone without CLONE_THREAD
            # (a new process: SIGCHLD as its exit signal) is refused.
            out["clone3"] = syscall_errno(arch["clone3"], 0, 0)
            out["clone_process"] = syscall_errno(arch["clone"], 17, 0, 0, 0, 0)
            return out

        seen = in_child(body)
        self.assertEqual(seen.get("fork"), errno.EPERM, seen)
        self.assertEqual(seen["posix_spawn"], errno.EPERM)
        self.assertEqual(seen["execv"], errno.EPERM)
        self.assertTrue(seen["thread"])
        self.assertEqual(seen["clone3"], errno.ENOSYS)
        self.assertEqual(seen["clone_process"], errno.EPERM)

    def test_the_scorer_sees_the_filter_from_outside(self) -> None:
        ready_r, ready_w = os.pipe()
        hold_r, hold_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            harness_process.forbid_new_processes()
            os.write(ready_w, b"1")
            os.read(hold_r, 1)
            os._exit(0)
        try:
            os.read(ready_r, 1)
            self.assertTrue(harness_process.cannot_start_processes(pid))
        finally:
            os.write(hold_w, b"1")
            os.waitpid(pid, 0)
            for fd in (ready_r, ready_w, hold_r, hold_w):
                os.close(fd)

    def test_the_scorer_sees_an_unfiltered_process_as_such(self) -> None:
        self.assertFalse(harness_process.cannot_start_processes(os.getpid()))
        self.assertFalse(harness_process.cannot_start_processes(2**22 + 1))  # no such process

    def test_the_program_for_each_architecture(self) -> None:
        for machine in ("x86_64", "aarch64"):
            program = harness_process.process_filter(machine)
            arch = harness_process._ARCHES[machine]
            self.assertEqual(program[0], (0x20, 0, 0, 4))  # load seccomp_data.arch
            self.assertEqual(program[1][3], arch["audit"])
            self.assertEqual(program[-3:], [(6, 0, 0, 0x7FFF0000), (6, 0, 0, 0x50000 | errno.EPERM), (6, 0, 0, 0x50000 | errno.ENOSYS)])
            for index, (code, jt, jf, _k) in enumerate(program):
                if code & 0x07 == 0x05:  # a jump: both targets inside the program
                    self.assertLess(index + 1 + max(jt, jf), len(program))

    def test_undumpable_closes_proc(self) -> None:
        def body() -> dict:  # type: ignore[type-arg]
            harness_process.make_undumpable()
            with open(f"/proc/{os.getpid()}/status", encoding="ascii") as handle:
                return {"owner": os.stat(f"/proc/{os.getpid()}/environ").st_uid, "status": "Name" in handle.read()}

        seen = in_child(body)
        self.assertEqual(seen["owner"], 0, seen)  # root's now: the bundle's uid cannot open it


if __name__ == "__main__":
    unittest.main()
