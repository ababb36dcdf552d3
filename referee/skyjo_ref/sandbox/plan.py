"""A bot process's sandbox plan: what its supervisor applies before the bot runs, and how its end is read.

:class:`SandboxPlan` turns a :class:`~skyjo_ref.sandbox.limits.Sandbox` into a
command line (:meth:`SandboxPlan.wrap`): the supervisor (``supervisor.py``)
forks the bot, which applies the plan to itself (cgroup, namespaces, rlimits)
and ``exec``s the program, under bubblewrap when it is isolated.
:func:`classify_exit` reads what the kernel did to the bot when it ends.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from skyjo_ref.sandbox.cgroups import pids_cgroups
from skyjo_ref.sandbox.limits import Limits, Sandbox, SandboxUnavailable
from skyjo_ref.sandbox.namespaces import (
    CLONE_NEWUSER,
    TMP_INSIDE,
    BotView,
    isolation_problem,
    network_isolation,
    process_cap,
    supervised,
)

#: The exit code of ``python -m skyjo_bot run`` when the bot ran out of memory (see skyjo_bot.__main__).
SDK_OUT_OF_MEMORY: Final = 3

#: Words in a bot's last lines of output that say an allocation failed (Python, C++, Go, Java, node, Rust).
_OUT_OF_MEMORY_WORDS: Final = (
    "MemoryError",
    "out of memory",
    "Cannot allocate memory",
    "bad_alloc",
    "OutOfMemoryError",
    "heap out of memory",
    "memory allocation of",  # Rust: "memory allocation of N bytes failed", then an abort
)


#: Signals a program often dies of when an allocation fails and it does not check (or aborts on purpose).
_CRASH_SIGNALS: Final = tuple(-int(getattr(signal, name)) for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGTRAP"))


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """One bot process's sandbox, ready to apply in the child: the namespaces it gets (``unshare`` flags, or
    bubblewrap's isolated ``view``), its cgroup (a process cap), its rlimits."""

    sandbox: Sandbox
    unshare_flags: int = 0
    cgroup: Path | None = None
    parent_pid: int = field(default_factory=os.getpid)
    view: BotView | None = None

    @property
    def isolated(self) -> bool:
        return self.view is not None

    def rlimits(self) -> list[tuple[int, int, int]]:
        """(resource, soft, hard) for the child."""
        import resource

        limits = self.sandbox.limits
        out: list[tuple[int, int, int]] = []
        mb = 1024 * 1024
        if limits.memory_mb is not None:
            out.append((resource.RLIMIT_AS, limits.memory_mb * mb, limits.memory_mb * mb))
        if limits.cpu_seconds is not None:  # SIGXCPU at the soft limit, SIGKILL a second later
            out.append((resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1))
        if limits.open_files is not None:
            out.append((resource.RLIMIT_NOFILE, limits.open_files, limits.open_files))
        if limits.file_size_mb is not None:
            out.append((resource.RLIMIT_FSIZE, limits.file_size_mb * mb, limits.file_size_mb * mb))
        own_userns = self.unshare_flags & CLONE_NEWUSER or (self.isolated and os.geteuid() != 0)
        if limits.processes is not None and self.cgroup is None and own_userns:
            out.append((resource.RLIMIT_NPROC, limits.processes, limits.processes))  # counted in its namespace
        return out

    def env(self, own: Mapping[str, str], skyjo: Mapping[str, str]) -> dict[str, str]:
        """The bot's environment. Isolated, never the runner's (in CI that holds secrets and the gate's seed): a
        few neutral variables, the bot's own ``env`` from the config, and ``SKYJO_*``. Not isolated (trusted code,
        the author's own loop) it runs as the runner's user and keeps its environment. glibc's malloc arenas
        reserve 64 MB of address space per thread, which RLIMIT_AS counts, so a memory limit caps them at 2
        (unless the bot's env says otherwise)."""
        if self.isolated:
            out = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": str(TMP_INSIDE)}
            out["TMPDIR"] = str(TMP_INSIDE)
            out["LANG"] = "C.UTF-8"
        else:  # the runner's own SKYJO_* (a CA file for a remote referee, say) are not this bot's: it gets its own
            out = {k: v for k, v in os.environ.items() if not k.startswith("SKYJO_")}
        out["PYTHONUNBUFFERED"] = "1"
        if self.sandbox.limits.memory_mb is not None:
            out["MALLOC_ARENA_MAX"] = "2"
        out.update(own)
        out.update(skyjo)
        return out

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` under this plan: its supervisor (``supervisor.py``),
        whose child applies the plan and ``exec``s ``argv`` (isolated: bubblewrap, which sets the view up
        and runs ``argv`` in it); nothing runs between the referee's own ``fork`` and ``exec`` (gRPC's fork
        handlers make that unsafe)."""
        plan = {
            "cgroup_procs": str(self.cgroup / "cgroup.procs") if self.cgroup is not None else None,
            "unshare": self.unshare_flags,
            "rlimits": self.rlimits(),
            "parent": self.parent_pid,
            "isolate": self.view.bwrap() if self.view is not None else None,
        }
        return supervised(plan, argv)


def plan_for(sandbox: Sandbox, name: str, view: BotView | None = None) -> SandboxPlan:
    """The plan for a new process of bot ``name``: a fresh cgroup when it has a process cap; isolated
    (``sandbox.isolation == "strict"``), the ``view`` of the machine it gets."""
    check_sandbox(sandbox)
    isolated = sandbox.isolation == "strict"
    if isolated and view is None:
        raise SandboxUnavailable("isolation", f"bot {name!r} is to be isolated, but no view was given for it")
    flags = 0 if sandbox.has_network or isolated else network_isolation()[0]
    cgroup = None
    if sandbox.limits.processes is not None:
        if process_cap() == "userns":
            flags |= 0 if isolated else CLONE_NEWUSER  # isolated: bubblewrap's user namespace
        else:
            try:
                cgroup = pids_cgroups().create(name, sandbox.limits.processes)
            except OSError as exc:
                raise SandboxUnavailable("processes", f"cannot make a cgroup for bot {name!r}: {exc}") from None
    return SandboxPlan(sandbox, unshare_flags=flags, cgroup=cgroup, view=view if isolated else None)


def check_sandbox(sandbox: Sandbox) -> None:
    """Raise :class:`SandboxUnavailable` naming the first part of ``sandbox`` this machine cannot enforce."""
    limits = sandbox.limits
    if limits.any and not sys.platform.startswith("linux"):  # pragma: no cover - tested on Linux
        key = next(k for k in Limits.KEYS if getattr(limits, k) is not None)
        raise SandboxUnavailable(key, f"bot sandboxes are implemented for Linux only (this is {sys.platform})")
    if sandbox.isolation == "strict":
        problem = isolation_problem()
        if problem is not None:
            raise SandboxUnavailable("isolation", problem)
    if limits.processes is not None:
        process_cap()  # raises SandboxUnavailable
    if not sandbox.has_network and sandbox.isolation != "strict":
        _, problem = network_isolation()
        if problem is not None:
            raise SandboxUnavailable("network", problem)


def classify_exit(sandbox: Sandbox, returncode: int, output: str, pids_hits: int = 0) -> str | None:
    """The limit a bot process hit, judging by how it ended and its last output; None if none.

    CPU and file size: the kernel kills with SIGXCPU / SIGXFSZ (and SIGKILL one
    second past the CPU limit). Memory: allocations fail; the SDK then exits
    with :data:`SDK_OUT_OF_MEMORY`, other runtimes abort with a message.
    Processes: the cgroup counts failed forks.
    """
    limits = sandbox.limits
    if limits.processes is not None and pids_hits > 0:
        return f"process limit {limits.processes} reached"
    if limits.cpu_seconds is not None:
        if returncode == -signal.SIGXCPU:
            return f"CPU limit {limits.cpu_seconds} s"
        if returncode == -signal.SIGKILL:
            return f"CPU limit {limits.cpu_seconds} s (or the kernel's OOM killer)"
    if limits.file_size_mb is not None and (returncode == -signal.SIGXFSZ or "File too large" in output):
        return f"file size limit {limits.file_size_mb} MB"
    if limits.memory_mb is not None and (
        returncode == SDK_OUT_OF_MEMORY or any(word in output for word in _OUT_OF_MEMORY_WORDS)
    ):
        return f"memory limit {limits.memory_mb} MB"
    if limits.memory_mb is not None and returncode in _CRASH_SIGNALS:  # what failed allocations often end in
        return f"memory limit {limits.memory_mb} MB, probably"
    return None


def describe_returncode(returncode: int) -> str:
    """``exited with code 1`` or ``killed by SIGXCPU``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"
