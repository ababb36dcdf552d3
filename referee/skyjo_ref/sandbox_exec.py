"""The sandbox's exec wrapper: ``python -I -S sandbox_exec.py PLAN_JSON PROGRAM ARGS...``.

Run by the referee as the bot's process, it applies the plan to itself and
then becomes the bot (``execvp``, same pid). It exists because the plan cannot
be applied between ``fork`` and ``exec`` of the referee (``preexec_fn``): that
forces a real ``fork`` of a process full of gRPC threads, whose fork handlers
can crash the child. Standard library only (it runs without ``site``), and no
import of ``skyjo_ref``.

Order matters: the cgroup first (the process cap holds from the first fork),
then the namespaces, the rlimits, and the parent-death signal last (changing
credentials would clear it).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
CLONE_NEWUSER = 0x10000000

#: Exit code when the sandbox cannot be applied (like a shell's "cannot execute").
CANNOT_SANDBOX = 126


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def apply(plan: dict[str, object]) -> None:
    """Apply ``plan`` (see :meth:`skyjo_ref.sandbox.SandboxPlan.wrap`) to this process."""
    libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
    cgroup_procs = plan.get("cgroup_procs")
    if isinstance(cgroup_procs, str):
        _write(cgroup_procs, str(os.getpid()))
    flags = int(plan.get("unshare") or 0)  # type: ignore[call-overload]
    if flags and libc is not None:
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(flags) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"unshare: {os.strerror(code)}")
        if flags & CLONE_NEWUSER:  # stay the same user inside the new user namespace
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
    for which, soft, hard in plan.get("rlimits") or []:  # type: ignore[attr-defined]
        resource.setrlimit(int(which), (int(soft), int(hard)))
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != plan.get("parent"):  # the referee died before prctl: nobody would stop us
            os._exit(CANNOT_SANDBOX)


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: sandbox_exec.py PLAN_JSON PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    try:
        apply(json.loads(argv[1]))
    except (OSError, ValueError) as exc:
        print(f"skyjo-ref sandbox: cannot sandbox the bot: {exc}", file=sys.stderr, flush=True)
        return CANNOT_SANDBOX
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as exc:
        print(f"skyjo-ref sandbox: cannot run {argv[2]!r}: {exc.strerror or exc}", file=sys.stderr, flush=True)
        return CANNOT_SANDBOX
    return CANNOT_SANDBOX  # pragma: no cover - execvp does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv))
