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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from skyjo_ref.sandbox.cgroups import PidsCgroups, bot_cgroups, bot_memory_mb, cap_memory, pids_cgroups
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

#: An isolated bot's caps when its config names none (docs/sandbox.md): tasks (processes and threads) of one of its
#: processes, and of all of them together. An SDK process runs about 10 threads; a bot keeps up to about 30 processes
#: at big tables.
DEFAULT_PROCESS_TASKS: Final = 512
DEFAULT_BOT_TASKS: Final = 2048

#: How a fault names a bot process the kernel killed because the bot's processes together used their memory.
BOT_MEMORY_LIMIT: Final = "memory limit of the bot"

#: How a fault names a bot stopped for its CPU time in all (``cpu_seconds``, counted by its cgroup).
TOTAL_CPU_LIMIT: Final = "total CPU limit"

#: Where prlimit is, to set RLIMIT_NPROC inside an isolated bot's own user namespace (not before it: there it would
#: count every process of the user on the host).
PRLIMIT: Final = "/usr/bin/prlimit"

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
    more_cgroups: tuple[Path, ...] = ()  # the process's groups in other hierarchies (cgroup v1: cpu, cpuacct)
    bot_cpu: Path | None = None  # the bot's group that counts the CPU time of all its processes
    bot_memory: Path | None = None  # the bot's group that caps the memory of all its processes
    nproc_inside: int | None = None  # RLIMIT_NPROC set inside the bot's own user namespace (isolated, no cgroup)

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
        if limits.processes is not None and self.cgroup is None and self.unshare_flags & CLONE_NEWUSER:
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
        groups = (self.cgroup, *self.more_cgroups) if self.cgroup is not None else self.more_cgroups
        if self.nproc_inside is not None:
            argv = [PRLIMIT, f"--nproc={self.nproc_inside}", "--", *argv]
        plan = {
            "cgroup_procs": [str(group / "cgroup.procs") for group in groups],
            "unshare": self.unshare_flags,
            "rlimits": self.rlimits(),
            "parent": self.parent_pid,
            **(self.view.plan() if self.view is not None else {}),
        }
        return supervised(plan, argv)


def plan_for(sandbox: Sandbox, name: str, view: BotView | None = None) -> SandboxPlan:
    """The plan for a new process of bot ``name``: fresh cgroups when it has a process cap (an isolated bot always
    has one: :data:`DEFAULT_PROCESS_TASKS` unless its config names one), in the bot's own group, which has a fair
    CPU share and counts the CPU time of all its processes; isolated (``sandbox.isolation == "strict"``), the
    ``view`` of the machine it gets."""
    check_sandbox(sandbox)
    isolated = sandbox.isolation == "strict"
    if isolated and view is None:
        raise SandboxUnavailable("isolation", f"bot {name!r} is to be isolated, but no view was given for it")
    flags = 0 if sandbox.has_network or isolated else network_isolation()[0]
    processes = sandbox.limits.processes
    defaulted = isolated and processes is None
    if processes is None and not defaulted:
        return SandboxPlan(sandbox, unshare_flags=flags)
    cap = process_cap(quiet=defaulted)
    if cap == "none":  # root without a writable cgroup: the default cap cannot be enforced (docs/sandbox.md)
        return SandboxPlan(sandbox, unshare_flags=flags, view=view)
    processes = processes if processes is not None else DEFAULT_PROCESS_TASKS
    sandbox = replace(sandbox, limits=replace(sandbox.limits, processes=processes))
    if cap == "userns":
        if isolated:  # bubblewrap's user namespace: the cap is set inside it
            return SandboxPlan(sandbox, unshare_flags=flags, view=view, nproc_inside=processes)
        return SandboxPlan(sandbox, unshare_flags=flags | CLONE_NEWUSER)
    try:
        pids = pids_cgroups()
        cgroup = pids.create(name, processes, DEFAULT_BOT_TASKS if isolated else None)
        more, bot_cpu, bot_memory = _bot_groups(name, pids, cgroup) if isolated else ((), None, None)
    except OSError as exc:
        raise SandboxUnavailable("processes", f"cannot make a cgroup for bot {name!r}: {exc}") from None
    return SandboxPlan(
        sandbox,
        unshare_flags=flags,
        cgroup=cgroup,
        view=view if isolated else None,
        more_cgroups=more,
        bot_cpu=bot_cpu,
        bot_memory=bot_memory,
    )


def _bot_groups(name: str, pids: PidsCgroups, process: Path) -> tuple[tuple[Path, ...], Path | None, Path | None]:
    """(the process's groups in the hierarchies other than the pids one, the bot's group counting its CPU time,
    the bot's group capping its memory): a bot's group has the default CPU weight, so all bots share the CPU
    fairly whatever their processes, and at most :func:`bot_memory_mb` of memory."""
    share, account, memory = bot_cgroups()
    more: list[Path] = []
    bot_cpu = bot_memory = None
    for tree in (share, account, memory):
        if tree is None:
            continue
        if tree.parent == pids.parent:  # cgroup v2: one tree
            leaf = process
        else:
            leaf = tree.base / f"bot-{name}" / process.name
            if leaf not in more:  # cgroup v1 may mount cpu and cpuacct together
                tree.bot_group(name)
                leaf.mkdir()
                more.append(leaf)
        if tree is account:
            bot_cpu = leaf.parent
        if tree is memory:
            bot_memory = leaf.parent
            cap_memory(bot_memory, bot_memory_mb())
    return tuple(more), bot_cpu, bot_memory


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
