"""The vocabulary of bot sandboxes: per-process limits, isolation, network (no I/O here).

docs/sandbox.md says what each part does and does not protect against.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, Final, Literal


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


#: ``strict``: the bot sees and reaches nothing but its own files and the referee (docs/sandbox.md);
#: ``none``: it runs as the referee's user, with the referee's view of the machine (trusted code only).
Isolation = Literal["strict", "none"]
ISOLATIONS: Final[tuple[Isolation, ...]] = ("strict", "none")


@dataclass(frozen=True, slots=True)
class Sandbox:
    """What a managed bot may use: its limits, its isolation, and whether it has a network
    (``network`` None: the isolation's default, none under ``strict``, the host's under ``none``)."""

    limits: Limits = field(default_factory=Limits)
    network: bool | None = None
    isolation: Isolation = "none"

    @property
    def has_network(self) -> bool:
        """Whether the bot may use the host's network (it always reaches the referee)."""
        return self.network if self.network is not None else self.isolation == "none"

    @property
    def active(self) -> bool:
        return self.limits.any or not self.has_network or self.isolation == "strict"

    def describe(self) -> str:
        parts = ["isolated"] if self.isolation == "strict" else []
        if self.limits.any:
            parts.append(self.limits.describe())
        if not self.has_network:
            parts.append("no network")
        return ", ".join(parts) or "no sandbox"


def merge(default: Sandbox, limits: Limits | None, network: bool | None, isolation: Isolation | None = None) -> Sandbox:
    """A bot's sandbox: its own limits, network and isolation over the tournament's default."""
    out = default
    if limits is not None:
        out = replace(out, limits=limits.over(default.limits))
    if network is not None:
        out = replace(out, network=network)
    if isolation is not None:
        out = replace(out, isolation=isolation)
    return out
