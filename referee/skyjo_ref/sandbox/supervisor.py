"""The bot's supervisor: ``python -I -S supervisor.py PLAN_JSON PROGRAM ARGS...``.

The referee starts this instead of the bot. It forks the bot, which applies
the sandbox plan to itself and ``exec``s the program, and then waits for it and
ends the same way (exit code, or the same signal), so the referee sees the
bot's own end. It exists for two reasons:

- Nothing may run between ``fork`` and ``exec`` of the referee itself
  (``preexec_fn``): that forces a real ``fork`` of a process full of gRPC
  threads, whose fork handlers can crash the child.
- When the referee dies, even by ``kill -9``, the kernel tells this process
  (``PR_SET_PDEATHSIG``: SIGTERM) and it kills the bot's whole process group
  and cgroup, the bot's own children included; nothing of a bot outlives the
  referee.

Standard library only (it runs without ``site``); no import of ``skyjo_ref``.
In the bot, order matters: the cgroup first (the process cap holds from its
first fork), then the namespaces, the rlimits, and the parent-death signal
last (changing credentials would clear it). An isolated bot's program is run
by bubblewrap (the plan's ``isolate`` command line), which reports a bot
killed by signal N as exit code 128+N: the supervisor ends by that signal, so
the referee reads a limit (SIGXCPU, SIGKILL) the same way isolated or not.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
from typing import Any

PR_SET_PDEATHSIG = 1
CLONE_NEWUSER = 0x10000000

#: Exit code when the sandbox cannot be applied or the program cannot be run (a shell's "cannot execute").
CANNOT_SANDBOX = 126


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def apply(plan: dict[str, Any], libc: Any, parent: int) -> None:
    """In the bot's process: apply ``plan`` (see :meth:`skyjo_ref.sandbox.plan.SandboxPlan.wrap`) to itself."""
    for cgroup_procs in plan.get("cgroup_procs") or []:  # the process cap's group first
        _write(str(cgroup_procs), str(os.getpid()))
    flags = int(plan.get("unshare") or 0)
    if flags and libc is not None:
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(flags) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"unshare: {os.strerror(code)}")
        if flags & CLONE_NEWUSER:  # stay the same user inside the new user namespace
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
    for which, soft, hard in plan.get("rlimits") or []:
        resource.setrlimit(int(which), (int(soft), int(hard)))
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the supervisor died before prctl
            os._exit(CANNOT_SANDBOX)


#: In an isolated plan's bubblewrap command line: the place of the seccomp filter's descriptor.
SECCOMP_FD_SLOT = "{seccomp_fd}"


def _with_seccomp(isolate: list[str], program_hex: str) -> list[str]:
    """Bubblewrap's command line with the seccomp filter in a descriptor it inherits (it reads and closes it)."""
    if SECCOMP_FD_SLOT not in isolate:
        return isolate
    if not program_hex:
        raise ValueError("the plan isolates the bot but holds no seccomp filter")
    fd = os.memfd_create("skyjo-seccomp", 0)  # no close-on-exec: bubblewrap inherits it
    os.write(fd, bytes.fromhex(program_hex))
    os.lseek(fd, 0, os.SEEK_SET)
    return [str(fd) if word == SECCOMP_FD_SLOT else word for word in isolate]


def _kill_everything(cgroup_procs: str | None) -> None:
    """The referee is gone: SIGKILL the bot's cgroup and process group (this process included)."""
    if cgroup_procs is not None:
        with contextlib.suppress(OSError):
            with open(cgroup_procs, encoding="ascii") as listed:
                for pid in listed.read().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)
    os.killpg(0, signal.SIGKILL)


#: Signals whose disposition cannot be changed (``signal.signal`` raises EINVAL for them).
_UNCATCHABLE = frozenset({signal.SIGKILL, signal.SIGSTOP})


def _killed_by(status: int, isolated: bool) -> int | None:
    """The signal that ended the bot, if one did (isolated: bubblewrap's exit code 128+N means signal N)."""
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status)
    code = os.waitstatus_to_exitcode(status)
    if isolated and 128 < code < 128 + signal.NSIG:
        return code - 128
    return None


def _end_like(status: int, isolated: bool = False) -> None:
    """Exit as the bot did: its exit code, or killed by the same signal."""
    sig = _killed_by(status, isolated)
    if sig is not None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file of the supervisor
        if sig not in _UNCATCHABLE:
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # a signal that does not kill (SIGCHLD, ...): say which
    os._exit(os.waitstatus_to_exitcode(status))


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: sandbox_exec.py PLAN_JSON PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    plan = json.loads(argv[1])
    referee = int(plan["parent"])
    cgroup_procs = str(plan["cgroup_procs"][0]) if plan.get("cgroup_procs") else None
    isolate = [str(word) for word in plan.get("isolate") or []]
    libc = _libc()

    def on_term(sig: int, frame: object) -> None:
        if os.getppid() != referee:  # our parent-death signal: take the bot's whole tree with us
            _kill_everything(cgroup_procs)
        # otherwise the referee's own SIGTERM to the group: the bot got it too; wait for it to end

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the referee stops bots with SIGTERM, not the terminal's Ctrl-C
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != referee:
        return CANNOT_SANDBOX
    supervisor = os.getpid()
    if "SKYJO_PARENT_PID" in os.environ:  # SDK bots watch their parent: that is us now
        os.environ["SKYJO_PARENT_PID"] = str(supervisor)
    child = os.fork()
    if child == 0:
        try:
            for name in ("SIGTERM", "SIGINT", "SIGPIPE", "SIGXFSZ"):  # as subprocess does: Python changed them
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            apply(plan, libc, supervisor)
            program = [*_with_seccomp(isolate, str(plan.get("seccomp") or "")), *argv[2:]] if isolate else argv[2:]
            os.execvp(program[0], program)
        except (OSError, ValueError) as exc:
            print(f"skyjo-ref sandbox: cannot start {argv[2]!r}: {exc}", file=sys.stderr, flush=True)
        os._exit(CANNOT_SANDBOX)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:  # pragma: no cover - reaped elsewhere
            return CANNOT_SANDBOX
    _end_like(status, bool(isolate))
    return CANNOT_SANDBOX  # pragma: no cover - _end_like exits


if __name__ == "__main__":
    sys.exit(main(sys.argv))
