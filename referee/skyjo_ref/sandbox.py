"""Sandboxing managed bots: resource limits, a process cap, no network, and the whole process tree killed.

A league runs code it did not write. A :class:`Sandbox` says what a bot
process may use; :class:`SandboxPlan` turns it into a command line
(:meth:`SandboxPlan.wrap`): the supervisor ``sandbox_exec.py`` forks the bot,
which applies the plan to itself before it ``exec``s the program.
:func:`classify_exit` reads what the kernel did to the bot when it ends.
docs/sandbox.md says what each limit does and does not protect against.

- ``memory_mb``, ``cpu_seconds``, ``open_files``, ``file_size_mb``: rlimits set
  in the child before it runs (``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_NOFILE``,
  ``RLIMIT_FSIZE``); they hold for every process the bot starts, each on its own.
- ``processes``: ``RLIMIT_NPROC`` counts every process of a user (and root
  ignores it), so it cannot bound one bot. Each bot gets its own cgroup with
  ``pids.max`` instead (cgroup v2, or v1's ``pids`` hierarchy) where one is
  writable; the cgroup also lets the referee kill every process of the bot,
  even those that left its process group. Else, where user namespaces are
  allowed, the bot gets one of its own, in which ``RLIMIT_NPROC`` counts only
  its processes. Where neither works the limit is refused
  (:class:`SandboxUnavailable`), never silently dropped.
- ``network: false``: the bot gets its own network namespace (as root, or in
  an unprivileged user namespace where the kernel allows it): no interface but
  a loopback of its own, which is down. It reaches the referee through a
  ``unix:`` socket, which lives in the file system, not in the network.
- Every bot (sandboxed or not, on Linux) runs under its supervisor, in its own
  session; the referee signals the process group, and when the referee dies,
  even by ``kill -9``, the supervisor learns it (``PR_SET_PDEATHSIG``) and
  kills the bot's process group and cgroup.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, Final, Literal

#: Linux's ``unshare`` flags used here (from <sched.h>).
CLONE_NEWUSER: Final = 0x10000000
CLONE_NEWNET: Final = 0x40000000

#: The bot's supervisor: it starts the bot under a plan, and kills its tree when the referee dies.
WRAPPER: Final = Path(__file__).with_name("sandbox_exec.py")

#: The exit code of ``python -m skyjo_bot run`` when the bot ran out of memory (see skyjo_bot.__main__).
SDK_OUT_OF_MEMORY: Final = 3

#: Words in a bot's last lines of output that say an allocation failed (Python, C++, Go, Java, node).
_OUT_OF_MEMORY_WORDS: Final = (
    "MemoryError",
    "out of memory",
    "Cannot allocate memory",
    "bad_alloc",
    "OutOfMemoryError",
    "heap out of memory",
)


#: Signals a program often dies of when an allocation fails and it does not check (or aborts on purpose).
_CRASH_SIGNALS: Final = tuple(-int(getattr(signal, name)) for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGTRAP"))


class SandboxUnavailable(OSError):
    """A limit this machine cannot enforce; the message names it and says why."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-process limits of a bot (None: no limit). Units are in the names."""

    memory_mb: int | None = None
    cpu_seconds: int | None = None
    open_files: int | None = None
    file_size_mb: int | None = None
    processes: int | None = None

    KEYS: ClassVar[tuple[str, ...]] = ("memory_mb", "cpu_seconds", "open_files", "file_size_mb", "processes")
    #: The smallest value of each key that still lets a bot start.
    MINIMUM: ClassVar[dict[str, int]] = {
        "memory_mb": 64,
        "cpu_seconds": 1,
        "open_files": 16,
        "file_size_mb": 1,
        "processes": 1,
    }

    def over(self, defaults: Limits) -> Limits:
        """These limits, each unset one taken from ``defaults``."""
        return Limits(
            **{k: getattr(self, k) if getattr(self, k) is not None else getattr(defaults, k) for k in self.KEYS}
        )

    @property
    def any(self) -> bool:
        return any(getattr(self, k) is not None for k in self.KEYS)

    def describe(self) -> str:
        """``memory 200 MB, CPU 2 s``, or ``no limits``."""
        parts = []
        if self.memory_mb is not None:
            parts.append(f"memory {self.memory_mb} MB")
        if self.cpu_seconds is not None:
            parts.append(f"CPU {self.cpu_seconds} s")
        if self.open_files is not None:
            parts.append(f"{self.open_files} open files")
        if self.file_size_mb is not None:
            parts.append(f"file size {self.file_size_mb} MB")
        if self.processes is not None:
            parts.append(f"{self.processes} processes")
        return ", ".join(parts) or "no limits"


@dataclass(frozen=True, slots=True)
class Sandbox:
    """What a managed bot may use: its limits and whether it has a network."""

    limits: Limits = field(default_factory=Limits)
    network: bool = True

    @property
    def active(self) -> bool:
        return self.limits.any or not self.network

    def describe(self) -> str:
        parts = [self.limits.describe()] if self.limits.any else []
        if not self.network:
            parts.append("no network")
        return ", ".join(parts) or "no sandbox"


# --------------------------------------------------------------------- what the host allows


def _try_unshare(flags: int, what: str) -> str | None:
    """None if a child can ``unshare(flags)`` here (tried through the supervisor, as bots are), else why not."""
    if not sys.platform.startswith("linux"):
        return f"{what} are a Linux feature (this is {sys.platform})"
    plan = SandboxPlan(Sandbox(), unshare_flags=flags)
    try:
        subprocess.run(
            plan.wrap([sys.executable, "-I", "-S", "-c", ""]),
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=30,
        )
    except subprocess.CalledProcessError as exc:
        who = "root" if os.geteuid() == 0 else "an unprivileged user (are user namespaces disabled?)"
        said = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or ["no reason given"]
        return f"cannot create {what} as {who}: {said[0]}"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot create {what}: {exc}"
    return None


@functools.cache
def network_isolation() -> tuple[int, str | None]:
    """The ``unshare`` flags that give a child its own network here, or (0, why not)."""
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    problem = _try_unshare(flags, "network namespaces")
    return (0, problem) if problem is not None else (flags, None)


@functools.cache
def user_namespaces() -> str | None:
    """None if a bot can get a user namespace of its own here, else why not."""
    return _try_unshare(CLONE_NEWUSER, "user namespaces")


def process_cap() -> Literal["cgroup", "userns"]:
    """How this machine caps one bot's processes, or :class:`SandboxUnavailable` saying why it cannot.

    A cgroup with ``pids.max`` (the referee sees a bot hit it, and can kill all
    of its processes), else a user namespace of the bot's own, in which
    ``RLIMIT_NPROC`` counts only the bot's processes (Linux 5.14+ counts it per
    user namespace; the fork that would pass the cap fails, unseen by the referee).
    Not for root: the kernel exempts uid 0 from ``RLIMIT_NPROC`` in every namespace.
    """
    try:
        pids_cgroups()
        return "cgroup"
    except SandboxUnavailable as no_cgroup:
        if os.geteuid() == 0:  # the kernel exempts uid 0 from RLIMIT_NPROC, in any user namespace
            raise
        why_not = user_namespaces()
        if why_not is None:
            return "userns"
        raise SandboxUnavailable("processes", f"{no_cgroup.reason}; and no user namespace: {why_not}") from None


def check_sandbox(sandbox: Sandbox) -> None:
    """Raise :class:`SandboxUnavailable` naming the first part of ``sandbox`` this machine cannot enforce."""
    limits = sandbox.limits
    if limits.any and not sys.platform.startswith("linux"):  # pragma: no cover - tested on Linux
        key = next(k for k in Limits.KEYS if getattr(limits, k) is not None)
        raise SandboxUnavailable(key, f"bot sandboxes are implemented for Linux only (this is {sys.platform})")
    if limits.processes is not None:
        process_cap()  # raises SandboxUnavailable
    if not sandbox.network:
        _, problem = network_isolation()
        if problem is not None:
            raise SandboxUnavailable("network", problem)


# ----------------------------------------------------------------------------- cgroups


class PidsCgroups:
    """Where this referee makes one cgroup per bot process, each with ``pids.max``.

    ``base`` is ``<own cgroup>/skyjo-ref-<pid>``; a bot's group is
    ``base/<name>``. Groups of referees that died without cleaning up (kill -9)
    are emptied and removed by the next referee that uses cgroups here.
    """

    def __init__(self, parent: Path, version: int) -> None:
        self.parent = parent
        self.version = version
        self.base = parent / f"skyjo-ref-{os.getpid()}"
        self._count = 0

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text, encoding="ascii")

    def sweep(self) -> None:
        """Kill and remove the groups of referees that are no longer running."""
        for stale in self.parent.glob("skyjo-ref-*"):
            pid = stale.name.removeprefix("skyjo-ref-")
            if not pid.isdigit() or int(pid) == os.getpid() or Path(f"/proc/{pid}").exists():
                continue
            for group in [g for g in stale.iterdir() if g.is_dir()]:
                kill_group(group)
                with contextlib.suppress(OSError):
                    group.rmdir()
            with contextlib.suppress(OSError):
                stale.rmdir()

    def _remove_base(self) -> None:
        """At exit: remove this referee's folder and its groups (what is still busy: the next run's sweep)."""
        for group in [g for g in self.base.glob("*") if g.is_dir()]:
            remove_group(group)
        with contextlib.suppress(OSError):
            self.base.rmdir()

    def create(self, name: str, max_pids: int) -> Path:
        """A fresh group for one bot process, limited to ``max_pids`` tasks (processes and threads)."""
        if not self.base.exists():
            self.base.mkdir()
            atexit.register(self._remove_base)
            if self.version == 2:
                self._write(self.base / "cgroup.subtree_control", "+pids")
        self._count += 1
        group = self.base / f"{name}-{self._count}"
        group.mkdir()
        self._write(group / "pids.max", str(max_pids))
        return group


def group_pids(group: Path) -> list[int]:
    try:
        text = (group / "cgroup.procs").read_text(encoding="ascii")
    except OSError:
        return []
    return [int(p) for p in text.split()]


def kill_group(group: Path) -> None:
    """SIGKILL every process in ``group`` (a fork loop cannot outrun it: the group is capped)."""
    killed: set[int] = set()
    for _ in range(1000):  # each round kills what the last round's processes forked before they died
        fresh = [pid for pid in group_pids(group) if pid not in killed]
        if not fresh:
            return
        for pid in fresh:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(fresh)


def pids_limit_hits(group: Path) -> int:
    """How often a fork in ``group`` failed on ``pids.max``."""
    try:
        text = (group / "pids.events").read_text(encoding="ascii")
    except OSError:
        return 0
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "max" and value.strip().isdigit():
            return int(value)
    return 0


def remove_group(group: Path) -> bool:
    """Kill what is left in ``group`` and remove it; False while killed processes are still leaving it."""
    kill_group(group)
    try:
        group.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


#: Groups whose killed processes had not all left when their bot ended: removed at the next chance.
_retired: list[Path] = []


def retire_group(group: Path) -> None:
    """Kill everything in a finished bot's ``group`` and remove it, now or (still busy) at the next
    :func:`retire_group` or at exit: nothing waits for the kernel to reap."""
    _retired.append(group)
    _retired[:] = [g for g in _retired if not remove_group(g)]


def _own_cgroups() -> Iterator[tuple[int, Path]]:
    """(version, folder) of this process's cgroups that have the pids controller."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
        mounts = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    for line in lines:
        _, controllers, own = line.split(":", 2)
        version = 2 if controllers == "" else 1
        if version == 1 and "pids" not in controllers.split(","):
            continue
        for mount in mounts:
            left, _, right = mount.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) < 5 or len(tail) < 3:
                continue
            fstype, options = tail[0], tail[2].split(",")
            if (version == 2 and fstype == "cgroup2") or (version == 1 and fstype == "cgroup" and "pids" in options):
                root, point = fields[3], fields[4]
                relative = os.path.relpath(own, root) if own.startswith(root) else None
                if relative is None or relative.startswith(".."):
                    continue
                folder = Path(point) / relative if relative != "." else Path(point)
                if version == 2:
                    try:
                        available = (folder / "cgroup.controllers").read_text(encoding="ascii").split()
                    except OSError:
                        continue
                    if "pids" not in available:
                        continue
                yield version, folder


@functools.cache
def pids_cgroups() -> PidsCgroups:
    """The cgroups this referee can make for bots, or :class:`SandboxUnavailable` saying why none."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable("processes", f"needs Linux cgroups (this is {sys.platform})")
    tried: list[str] = []
    for version, folder in _own_cgroups():
        cgroups = PidsCgroups(folder, version)
        try:
            probe = cgroups.create("probe", 1)
        except OSError as exc:
            tried.append(f"{folder}: {exc.strerror or exc}")
            with contextlib.suppress(OSError):
                cgroups.base.rmdir()
            continue
        probe.rmdir()
        cgroups.base.rmdir()
        cgroups.sweep()
        return cgroups
    found = "; ".join(tried) if tried else "no cgroup with the pids controller is mounted for this process"
    raise SandboxUnavailable(
        "processes",
        "cannot cap one bot's processes here: RLIMIT_NPROC counts every process of the user (root: none), "
        f"and no writable cgroup with pids.max was found ({found}); give the referee a writable cgroup (root, "
        "or a delegated cgroup v2 subtree), run it as a normal user where user namespaces are allowed, "
        "or remove the limit",
    )


# ------------------------------------------------------------------------------ the child


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """One bot process's sandbox, ready to apply in the child: the namespaces it gets (``unshare`` flags),
    its cgroup (a process cap), its rlimits."""

    sandbox: Sandbox
    unshare_flags: int = 0
    cgroup: Path | None = None
    parent_pid: int = field(default_factory=os.getpid)

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

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """The child's environment: glibc's malloc arenas reserve 64 MB of address space per thread,
        which RLIMIT_AS counts, so a memory limit caps them at 2 (unless the bot's env says otherwise)."""
        out = dict(base)
        if self.sandbox.limits.memory_mb is not None:
            out.setdefault("MALLOC_ARENA_MAX", "2")
        return out

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` under this plan: its supervisor (``sandbox_exec.py``),
        whose child applies the plan and ``exec``s ``argv``; nothing runs between the referee's own
        ``fork`` and ``exec`` (gRPC's fork handlers make that unsafe)."""
        plan = {
            "cgroup_procs": str(self.cgroup / "cgroup.procs") if self.cgroup is not None else None,
            "unshare": self.unshare_flags,
            "rlimits": self.rlimits(),
            "parent": self.parent_pid,
        }
        return [sys.executable, "-I", "-S", str(WRAPPER), json.dumps(plan), *argv]


def plan_for(sandbox: Sandbox, name: str) -> SandboxPlan:
    """The plan for a new process of bot ``name``: a fresh cgroup when it has a process cap."""
    check_sandbox(sandbox)
    flags = 0 if sandbox.network else network_isolation()[0]
    cgroup = None
    if sandbox.limits.processes is not None:
        if process_cap() == "userns":
            flags |= CLONE_NEWUSER
        else:
            try:
                cgroup = pids_cgroups().create(name, sandbox.limits.processes)
            except OSError as exc:
                raise SandboxUnavailable("processes", f"cannot make a cgroup for bot {name!r}: {exc}") from None
    return SandboxPlan(sandbox, unshare_flags=flags, cgroup=cgroup)


# ------------------------------------------------------------------------- why it ended


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


def merge(default: Sandbox, limits: Limits | None, network: bool | None) -> Sandbox:
    """A bot's sandbox: its own limits and network over the tournament's default."""
    out = default
    if limits is not None:
        out = replace(out, limits=limits.over(default.limits))
    if network is not None:
        out = replace(out, network=network)
    return out
