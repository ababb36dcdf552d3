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
