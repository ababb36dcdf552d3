"""A cgroup per bot process with ``pids.max``: the process cap, and a way to kill every process of a bot.

``RLIMIT_NPROC`` counts every process of a user (and root ignores it), so it
cannot bound one bot; a cgroup can, where the referee may write one (root, or a
delegated cgroup v2 subtree). The cgroup also lets the referee kill every
process of the bot, even those that left its process group.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from skyjo_ref.sandbox.limits import SandboxUnavailable


class PidsCgroups:
    """Where this referee makes the cgroups of a controller (``pids``; ``cpu``, ``cpuacct``, ``memory`` where v1
    mounts them apart): one group per bot, ``base/bot-<bot>``, and in it one per bot process,
    ``base/bot-<bot>/<bot>-<n>``.

    The bot's group holds what is the bot's as a whole (its CPU weight, its
    CPU time used, caps on all its tasks and memory); the process's group is what the
    referee kills when that process ends. ``base`` is ``<own cgroup>/skyjo-ref-<pid>``;
    groups of referees that died without cleaning up (kill -9) are emptied and
    removed by the next referee that uses cgroups here.
    """

    def __init__(self, parent: Path, version: int, controller: str = "pids") -> None:
        self.parent = parent
        self.version = version
        self.controller = controller
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
            _remove_tree(stale)

    def _remove_base(self) -> None:
        """At exit: remove this referee's folder and its groups (what is still busy: the next run's sweep)."""
        _remove_tree(self.base)

    def _enable(self, group: Path) -> None:
        """cgroup v2: let ``group``'s children use ``pids`` (needed) and ``cpu`` (a fair share where it may be
        enabled; a v2 tree without it gives none). v1: every group has its hierarchy's controller."""
        if self.version != 2:
            return
        available = (group / "cgroup.controllers").read_text(encoding="ascii").split()
        if self.controller == "pids":
            self._write(group / "cgroup.subtree_control", "+pids")
        for controller in ("cpu", "memory"):
            if controller in available:
                with contextlib.suppress(OSError):
                    self._write(group / "cgroup.subtree_control", f"+{controller}")

    def bot_group(self, name: str, max_pids: int | None = None) -> Path:
        """The group of bot ``name`` (made at its first process): every process of the bot is in it."""
        if not self.base.exists():
            self.base.mkdir()
            atexit.register(self._remove_base)
            self._enable(self.base)
        group = self.base / f"bot-{name}"  # never a control file's name (a bot may be called pids.max)
        if not group.exists():
            group.mkdir()
            self._enable(group)
            if max_pids is not None and (group / "pids.max").exists():
                self._write(group / "pids.max", str(max_pids))
        return group

    def create(self, name: str, max_pids: int | None, bot_pids: int | None = None) -> Path:
        """A fresh group for one process of bot ``name`` in the bot's group, limited to ``max_pids`` tasks
        (processes and threads); the bot's group to ``bot_pids`` tasks in all."""
        self._count += 1
        group = self.bot_group(name, bot_pids) / f"{name}-{self._count}"
        group.mkdir()
        if max_pids is not None and self.controller == "pids":
            self._write(group / "pids.max", str(max_pids))
        return group


def _remove_tree(folder: Path) -> None:
    """Kill what is in ``folder``'s groups and remove them, deepest first (busy ones are left)."""
    if not folder.is_dir():
        return
    for group in sorted((g for g in folder.rglob("*") if g.is_dir()), key=lambda g: -len(g.parts)):
        remove_group(group)
    remove_group(folder)


def group_pids(group: Path) -> list[int]:
    try:
        text = (group / "cgroup.procs").read_text(encoding="ascii")
    except OSError:
        return []
    return [int(p) for p in text.split()]


def kill_group(group: Path, deep: bool = False) -> None:
    """SIGKILL every process in ``group`` (``deep``: and in the groups inside it); a fork loop cannot outrun
    it: the group is capped."""
    killed: set[int] = set()
    for _ in range(1000):  # each round kills what the last round's processes forked before they died
        fresh = [pid for pid in (bot_pids(group) if deep else group_pids(group)) if pid not in killed]
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


def _own_cgroups(controller: str = "pids") -> Iterator[tuple[int, Path]]:
    """(version, folder) of this process's cgroups that have ``controller`` (v2: ``cpu.stat`` is in every group,
    so ``cpuacct`` is any v2 group)."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
        mounts = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    for line in lines:
        _, controllers, own = line.split(":", 2)
        version = 2 if controllers == "" else 1
        if version == 1 and controller not in controllers.split(","):
            continue
        for mount in mounts:
            left, _, right = mount.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) < 5 or len(tail) < 3:
                continue
            fstype, options = tail[0], tail[2].split(",")
            v1 = version == 1 and fstype == "cgroup" and controller in options
            if (version == 2 and fstype == "cgroup2") or v1:
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
                    if controller != "cpuacct" and controller not in available:
                        continue
                yield version, folder


def _writable(folder: Path, version: int, controller: str, tried: list[str]) -> PidsCgroups | None:
    """The cgroups of ``controller`` this referee can make under ``folder``, or None (why, in ``tried``)."""
    cgroups = PidsCgroups(folder, version, controller)
    made = not cgroups.base.exists()  # it exists when an earlier look of this referee left bots' groups in it
    try:
        if made:
            cgroups.base.mkdir()
            cgroups._enable(cgroups.base)
        probe = cgroups.base / "probe"  # bots' groups are bot-NAME
        probe.mkdir()
        if controller == "pids":
            cgroups._write(probe / "pids.max", "1")
        probe.rmdir()
        if made:
            cgroups.base.rmdir()
    except OSError as exc:
        tried.append(f"{folder}: {exc.strerror or exc}")
        with contextlib.suppress(OSError):
            if made:
                cgroups.base.rmdir()
        return None
    cgroups.sweep()
    return cgroups


@functools.cache
def bot_cgroups() -> tuple[PidsCgroups | None, PidsCgroups | None, PidsCgroups | None]:
    """(where a bot's group gets its fair CPU share, where its CPU time is counted, where its memory is capped),
    each None where this referee cannot make cgroups of it: cgroup v2's ``cpu`` (``cpu.weight``; ``cpu.stat``
    is in every v2 group) and ``memory``, or v1's ``cpu`` (``cpu.shares``), ``cpuacct`` (``cpuacct.usage``) and
    ``memory``. With the ``pids`` groups in the same v2 tree, those are the same folders."""
    if not sys.platform.startswith("linux"):
        return None, None, None
    try:
        pids_parent: Path | None = pids_cgroups().parent
    except SandboxUnavailable:
        pids_parent = None
    found: list[PidsCgroups | None] = []
    for controller in ("cpu", "cpuacct", "memory"):
        tree = None
        for version, folder in sorted(_own_cgroups(controller), key=lambda vf: -vf[0]):  # v2 first
            if version == 2 and folder == pids_parent:  # the pids groups' own v2 tree: the same folders
                tree = PidsCgroups(folder, version, controller)
            else:
                tree = _writable(folder, version, controller, [])
            if tree is not None:
                break
        found.append(tree)
    return found[0], found[1], found[2]


@functools.cache
def bot_memory_mb() -> int:
    """The memory one isolated bot's processes may use together: half the machine's (at least 1 GB), so
    that no bot can take the machine's memory from the referee and the other bots."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemTotal:"):
                return max(1024, int(line.split()[1]) // 1024 // 2)
    except (OSError, ValueError, IndexError):
        pass
    return 1024


def cap_memory(group: Path, mb: int) -> None:
    """Cap ``group``'s memory at ``mb`` (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``)."""
    name = "memory.max" if (group / "memory.max").exists() else "memory.limit_in_bytes"
    (group / name).write_text(str(mb * 1024 * 1024), encoding="ascii")


def oom_kills(group: Path) -> int:
    """How many processes of ``group`` (and the groups inside it) the kernel's OOM killer killed at a memory cap
    (v2 ``memory.events`` counts the groups inside; v1's ``memory.oom_control``, Linux 4.13+, each its own)."""
    if (group / "memory.events").exists():
        return _oom_count(group / "memory.events")
    return sum(_oom_count(g / "memory.oom_control") for g in (group, *(g for g in group.rglob("*") if g.is_dir())))


def _oom_count(path: Path) -> int:
    try:
        text = path.read_text(encoding="ascii")
    except OSError:
        return 0
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return 0


def cpu_used_s(group: Path) -> float | None:
    """The CPU time (s) all processes of ``group`` and its children have used, or None if unreadable."""
    try:
        if (group / "cpuacct.usage").exists():
            return int((group / "cpuacct.usage").read_text(encoding="ascii")) / 1e9
        for line in (group / "cpu.stat").read_text(encoding="ascii").splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
    except (OSError, ValueError):
        return None
    return None


def bot_pids(group: Path) -> list[int]:
    """Every process in ``group`` and the groups inside it."""
    return [pid for sub in (group, *(g for g in group.rglob("*") if g.is_dir())) for pid in group_pids(sub)]


@functools.cache
def pids_cgroups() -> PidsCgroups:
    """The cgroups this referee can make for bots, or :class:`SandboxUnavailable` saying why none."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable("processes", f"needs Linux cgroups (this is {sys.platform})")
    tried: list[str] = []
    for version, folder in _own_cgroups():
        cgroups = _writable(folder, version, "pids", tried)
        if cgroups is not None:
            return cgroups
    found = "; ".join(tried) if tried else "no cgroup with the pids controller is mounted for this process"
    raise SandboxUnavailable(
        "processes",
        "cannot cap one bot's processes here: RLIMIT_NPROC counts every process of the user (root: none), "
        f"and no writable cgroup with pids.max was found ({found}); give the referee a writable cgroup (root, "
        "or a delegated cgroup v2 subtree), run it as a normal user where user namespaces are allowed, "
        "or remove the limit",
    )
