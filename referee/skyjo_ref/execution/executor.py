"""Where games run: the executor setting (``executor:`` in a config, ``--executor`` on the command line).

``local``            one referee in this process (the default)
``processes``        a Dask ``LocalCluster`` on this machine, one worker process per core
``processes:N``      the same with N worker processes
``tcp://HOST:PORT``  a running Dask scheduler and its workers (docs/scale-out.md)

This module only reads the setting; :mod:`.dask_backend` runs it (and is the
only place that imports ``distributed``, an optional extra).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from skyjo_ref.errors import UsageError

if TYPE_CHECKING:
    from skyjo_ref.execution.play import BackendFactory
    from skyjo_ref.execution.types import RoomConfig

ExecutorKind = Literal["local", "processes", "scheduler"]

FORMS: Final = "'local', 'processes', 'processes:N' (N worker processes) or a Dask scheduler address tcp://HOST:PORT"
_SCHEDULER = re.compile(r"^(tcp|tls|ucx|inproc)://[^\s/]+$")
MAX_WORKERS: Final = 256


class ExecutorError(UsageError):
    """An executor setting that names no executor; the message says what is expected."""


@dataclass(frozen=True, slots=True)
class Executor:
    kind: ExecutorKind = "local"
    workers: int | None = None  # processes: how many worker processes (None: one per core)
    address: str | None = None  # scheduler: its address

    @classmethod
    def parse(cls, value: Any) -> Executor:
        """``local``, ``processes``, ``processes:N``, ``{processes: N}`` or ``tcp://host:port``."""
        if isinstance(value, dict) and list(value) == ["processes"]:
            value = f"processes:{value['processes']}"
        if not isinstance(value, str) or not value.strip():
            raise ExecutorError(f"expected {FORMS}, got {value!r}")
        text = value.strip()
        if text == "local":
            return cls("local")
        if text == "processes":
            return cls("processes")
        if text.startswith("processes:"):
            count = text[len("processes:") :].strip()
            if not count.isdigit() or not 1 <= int(count) <= MAX_WORKERS:
                raise ExecutorError(f"{text!r}: expected processes:N with N from 1 to {MAX_WORKERS}")
            return cls("processes", workers=int(count))
        if _SCHEDULER.match(text):
            return cls("scheduler", address=text)
        raise ExecutorError(f"{text!r}: expected {FORMS}")

    @property
    def is_local(self) -> bool:
        return self.kind == "local"

    def worker_count(self) -> int:
        """Processes to start for ``processes`` (one per core unless told)."""
        return self.workers if self.workers is not None else max(os.cpu_count() or 1, 1)

    def describe(self) -> str:
        if self.kind == "processes":
            return f"processes:{self.worker_count()}"
        if self.kind == "scheduler":
            return f"the Dask scheduler at {self.address}"
        return "local"


def backend_for(room: RoomConfig, executor: Executor, concurrency: int) -> tuple[BackendFactory | None, int]:
    """Where a run's games are played, checked before anything is touched: the backend factory (None: the local
    referee, :func:`.backend.referee_backend`) and how many games to keep submitted (Dask: more than play at
    once). The one executor-to-backend setup of the tournament, the gate and ``match``; :class:`ExecutorError`
    for what a Dask executor cannot run (remote bots, a running referee) or without ``distributed``."""
    if executor.is_local:
        return None, concurrency
    from skyjo_ref.execution.dask_backend import backend_factory, check_executor, in_flight

    check_executor(room, executor)
    return backend_factory(executor, concurrency), in_flight(executor, concurrency)
