"""Who plays: bot specs as users write them (command line, tournament config) and the bot processes the referee runs.

A spec on the command line is one of::

    random | greedy            a built-in bot, played inside the referee (no gRPC)
    path/bot.py[:Name]         a Python file written with the SDK   } run as a subprocess:
    package.module:Name        a module written with the SDK        } python -m skyjo_bot run SPEC
    cmd:COMMAND LINE           any program; it gets SKYJO_ADDR and SKYJO_TOKEN in its environment
    remote:NAME                a bot that connects by itself with a token the referee issues

Python bots run as subprocesses, never in the referee, so a bot that hangs
or crashes cannot freeze or kill a game. :class:`ManagedBot` starts such a
process, restarts it when it dies (recording each fault) and stops it cleanly.
One process serves one game at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import re
import shlex
import shutil
import signal
import sys
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from skyjo_bot.loader import split_spec

from skyjo_ref.botcheck import BotFileError, check_bot_file, check_bot_place
from skyjo_ref.bots import BUILTIN_BOTS
from skyjo_ref.errors import BotSpecError
from skyjo_ref.safetext import printable
from skyjo_ref.sandbox import (
    BOT_MEMORY_LIMIT,
    TOTAL_CPU_LIMIT,
    BotView,
    Sandbox,
    SandboxPlan,
    bot_memory_mb,
    classify_exit,
    cpu_used_s,
    describe_returncode,
    kill_group,
    oom_kills,
    pids_limit_hits,
    plan_for,
    remove_group,
    retire_group,
)

log = logging.getLogger(__name__)

BotKind = Literal["builtin", "python", "command", "remote"]
BOT_KINDS: Final[tuple[BotKind, ...]] = ("builtin", "python", "command", "remote")

SPEC_FORMS: Final = (
    "a built-in name ({builtins}), a Python file (bot.py or bot.py:ClassName), "
    "module:ClassName, cmd:COMMAND or remote:NAME"
)


def _forms() -> str:
    return SPEC_FORMS.format(builtins=", ".join(sorted(BUILTIN_BOTS)))


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One bot, as the user named it (a command-line spec or a tournament config entry), the one
    description of a bot everywhere. ``python`` is the SDK runner's spec (file path made absolute);
    ``token`` is a remote bot's own token when the user chose it (tournament config), else the
    referee issues one. ``sandbox``: the limits its processes run under (tournament config)."""

    kind: BotKind
    name: str
    text: str = ""
    builtin: str | None = None
    python: str | None = None
    command: tuple[str, ...] = ()
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    token: str | None = None
    sandbox: Sandbox = field(default_factory=Sandbox)
    in_process: bool = False  # a trusted python bot played inside the referee's process (no process, no isolation)
    root: Path | None = None  # the folder that is the bot (mounted whole, digested whole); see skyjo_ref.botfiles
    version: str | None = None  # the version the config gives (e.g. a commit id); else a digest of its files

    @property
    def managed(self) -> bool:
        """Whether the referee side starts a process for it."""
        return self.kind in ("python", "command") and not self.in_process

    def describe(self) -> str:
        """Its kind and what it runs, for messages (``python /abs/bot.py:Mine``, ``command ls -l``)."""
        if self.kind == "builtin":
            return f"builtin {self.builtin}"
        if self.kind == "python":
            return f"python {self.python}"
        if self.kind == "command":
            return "command " + shlex.join(self.command)
        return "remote"

    def process_command(self) -> tuple[str, ...]:
        """The command line of the bot's process (Python bots: the SDK runner in this interpreter)."""
        if self.kind == "python":
            assert self.python is not None
            return (sys.executable, "-m", "skyjo_bot", "run", self.python)
        if self.kind == "command":
            return self.command
        raise ValueError(f"{self.kind} bot {self.name!r} has no process")


def parse_bot_spec(text: str, *, base: Path | None = None) -> BotSpec:
    """Read a command-line bot spec; relative files are found from ``base`` (default: the current folder)."""
    text = text.strip()
    if not text:
        raise BotSpecError(f"empty bot spec: expected {_forms()}")
    if text in BUILTIN_BOTS:
        return BotSpec("builtin", text, text, builtin=text)
    if text.startswith("remote:"):
        name = text[len("remote:") :].strip()
        if not name:
            raise BotSpecError(f"{text!r} names no bot: expected remote:NAME")
        return BotSpec("remote", name, text)
    if text.startswith("cmd:"):
        return command_spec(text[len("cmd:") :], text=text)
    parts = split_spec(text)  # the SDK's reading: the runner reads the spec the same way
    target, attr = parts.target, parts.name
    if parts.is_file:
        path = Path(target).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        if not path.exists():
            raise BotSpecError(f"no such file {target!r} (bot spec {text!r}): expected a Python bot file")
        try:  # a folder, a syntax error, no bot or a missing class: one clean message now, not a process that exits
            check_bot_file(path, attr, given=target)
        except BotFileError as exc:
            raise BotSpecError(str(exc)) from None
        python = str(path.resolve()) + (f":{attr}" if attr else "")
        return BotSpec("python", attr or path.stem, text, python=python)
    if attr is not None:
        try:
            found = importlib.util.find_spec(target)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise BotSpecError(f"no module {target!r} can be imported (bot spec {text!r}): expected module:ClassName")
        if found.origin is not None and found.origin.endswith(".py"):
            try:  # the module's own file: compiled and read, not run
                check_bot_file(Path(found.origin), attr)
            except BotFileError as exc:
                raise BotSpecError(str(exc)) from None
        return BotSpec("python", attr, text, python=text)
    local = (base or Path.cwd()) / text
    if local.exists():  # a folder or a file of another language, named without a path separator
        try:
            check_bot_place(local, text)
        except BotFileError as exc:
            raise BotSpecError(str(exc)) from None
    raise BotSpecError(f"unknown bot {text!r}: expected {_forms()}")


def command_spec(
    command: str | list[str] | tuple[str, ...],
    *,
    name: str | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    text: str = "",
) -> BotSpec:
    """A bot run as a command line (a string is split like a shell would, without running one)."""
    try:
        argv = tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)
    except ValueError as exc:
        raise BotSpecError(f"cannot read command {command!r}: {exc}") from None
    if not argv:
        raise BotSpecError(f"empty command in bot spec {text or command!r}: expected cmd:PROGRAM ARGS...")
    folder = Path(cwd).expanduser() if cwd is not None else None
    if folder is not None and not folder.is_dir():
        raise BotSpecError(f"folder {str(folder)!r} does not exist: expected the bot's working folder")
    program = argv[0]
    local = (folder or Path.cwd()) / program
    if shutil.which(program) is None and not (("/" in program or "\\" in program) and local.exists()):
        raise BotSpecError(f"command {program!r} is not found on PATH (bot spec {text or shlex.join(argv)!r})")
    return BotSpec(
        "command",
        name or Path(program).stem,
        text or "cmd:" + shlex.join(argv),
        command=argv,
        cwd=folder,
        env=dict(env or {}),
    )


# ---------------------------------------------------------------------- processes


@dataclass(frozen=True, slots=True)
class ProcessFault:
    """A bot process that died on its own (not stopped by the referee), or was stopped for hitting a limit."""

    at: float  # time.time()
    returncode: int
    after_s: float  # how long it had run
    output: str  # its last lines of output
    limit: str | None = None  # the sandbox limit it hit ("CPU limit 2 s"), if any

    def describe(self) -> str:
        line = printable(telling_line(self.output))[:200]  # bot text, shown on terminals: no escape sequences
        if self.limit is not None:
            return f"killed: {self.limit} ({describe_returncode(self.returncode)} after {self.after_s:.1f} s): {line}"
        return f"exited with code {self.returncode} after {self.after_s:.1f} s: {line}"

    def tail(self, lines: int = 12) -> list[str]:
        """Its last output lines (up to ``lines``), to show under the one-line description."""
        return printable(self.output).rstrip().splitlines()[-lines:]


#: Lines that say why a program died: a Python or Node exception, a Go panic, a Rust panic, a C++ terminate.
_TELLING = re.compile(
    r"^\s*(?:panic: |fatal error: |thread '.*' panicked|terminate called|Uncaught |"
    r"(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt)\b)"
)


def telling_line(output: str) -> str:
    """The line of a crashed program's output that says why: the last exception or panic line
    (``ValueError: boom``, ``panic: index out of range``), not the stack frame or the runtime's
    version that often comes after it; else its last line."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if _TELLING.match(line):
            return line.strip()
    return lines[-1].strip() if lines else "(no output)"


#: The exit codes a stop's SIGTERM (or SIGKILL) gives: SDK bots exit 0, others die of the signal (a shell says 128+N).
_STOP_CODES: Final = frozenset({0, -signal.SIGTERM, -signal.SIGKILL, 128 + signal.SIGTERM, 128 + signal.SIGKILL})


def _bot_memory_hit(plan: SandboxPlan | None, code: int) -> str | None:
    """The bot's memory cap, if the kernel killed this process for it (SIGKILL, and its group counts OOM kills)."""
    if plan is None or plan.bot_memory is None or code != -signal.SIGKILL or oom_kills(plan.bot_memory) == 0:
        return None
    return f"{BOT_MEMORY_LIMIT} {bot_memory_mb()} MB, all its processes together (the kernel's OOM killer)"


def _has_ended(pid: int) -> bool:
    """Whether our child ``pid`` has already exited, before the event loop has heard of it: asyncio sets a
    process's ``returncode`` one loop turn after its child watcher reaps it. Peeks without reaping
    (``WNOWAIT``): the loop's own watcher still collects the exit status."""
    if not hasattr(os, "waitid"):  # pragma: no cover - Windows
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped by the child watcher
        return True


class _BotProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a process with pipes, that also says when the process has exited. On Python 3.11,
    ``Process.wait()`` returns only once the process has exited *and* its output pipe is closed: a child it left
    holding the pipe (in a session of its own) would hide its end, and hang a stop."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


#: How much of one output line is read at once; a longer line is cut in the log (see ManagedBot._pump).
LINE_LIMIT: Final = 64 * 1024


async def _start_process(
    argv: tuple[str, ...] | list[str], *, cwd: str | None, env: dict[str, str]
) -> asyncio.subprocess.Process:
    """Start a bot's process (stdout and stderr on one pipe; its own session: stop() reaches its children)."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _BotProtocol(LINE_LIMIT, loop),
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=os.name == "posix",
    )
    return asyncio.subprocess.Process(transport, protocol, loop)


async def _read_line(reader: asyncio.StreamReader) -> tuple[bytes, int] | None:
    """The next line (at most :data:`LINE_LIMIT` bytes of it) and how many bytes of it were dropped; None at
    the end. A longer line is read on to its end and dropped past its start: the reader never dies of it
    (``async for`` over a stream raises "Separator is found, but chunk is longer than limit")."""
    head: bytes | None = None
    cut = 0
    while True:
        try:
            raw = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end: a last line without its newline, or nothing
            raw = exc.partial
            if not raw and head is None:
                return None
        except asyncio.LimitOverrunError:
            chunk = await reader.read(LINE_LIMIT)  # the buffered part of the long line
            if head is None:
                head = chunk
            else:
                cut += len(chunk)
            continue
        if head is None:
            return raw, 0
        return head, cut + len(raw)


async def _ended(proc: asyncio.subprocess.Process) -> int:
    """The process's exit code, once it has exited (whoever still holds its output pipe)."""
    protocol = proc._protocol  # type: ignore[attr-defined]  # the Process of _start_process
    if isinstance(protocol, _BotProtocol):
        await protocol.exited.wait()
        code = proc.returncode
        assert code is not None
        return code
    return await proc.wait()


class ManagedBot:
    """A bot process the referee side runs: started with ``SKYJO_ADDR``/``SKYJO_TOKEN``, restarted
    when it crashes (up to ``max_restarts`` times, with a growing pause), stopped with SIGTERM and
    then SIGKILL. Its output (stdout and stderr) is kept: the last lines, and all of it in ``log_path``.

    Each process runs in its own session under the spec's :class:`~skyjo_ref.sandbox.Sandbox`; when it
    ends or is stopped, every process it started goes with it (its process group, and its cgroup
    when it has a process cap). ``address`` is where it connects; a bot without network needs a
    ``unix:`` address."""

    #: How often the process cap's cgroup is checked for failed forks (a bot that hits its cap is stopped).
    WATCHDOG_S: Final = 0.25
    #: The pause before restarting a crashed process: doubles from the first value with each restart, up to
    #: the second (a bot that crashes at once does not spin). stop() ends it at once.
    RESTART_BACKOFF_S: tuple[float, float] = (0.2, 5.0)

    def __init__(
        self,
        spec: BotSpec,
        address: str,
        token: str,
        *,
        max_restarts: int = 5,
        log_path: Path | None = None,
        keep_lines: int = 200,
        view: BotView | None = None,
        referee_env: Mapping[str, str] | None = None,
        parent_pid: int | None = None,
    ) -> None:
        if not spec.managed:
            raise ValueError(f"{spec.kind} bot {spec.name!r} is not run as a process")
        self.spec = spec
        self.address = address
        self.token = token
        self.view = view  # what it sees of the machine when it is isolated (the execution layer's bot pool builds it)
        self.referee_env = dict(referee_env or {})  # how to reach a running referee (its CA file for TLS)
        self.parent_pid = parent_pid  # the SKYJO_PARENT_PID it watches (default: this process; check-bot: a stand-in)
        self.max_restarts = max_restarts
        self.log_path = log_path
        self.faults: list[ProcessFault] = []
        self.restarts = 0
        self.exited = asyncio.Event()  # set each time the process ends, until it is started again
        self._fault_noted = asyncio.Condition()  # notified once each fault is in ``faults``
        self._lines: deque[str] = deque(maxlen=keep_lines)
        self._proc: asyncio.subprocess.Process | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False
        self._stopped_it = False  # stop() signalled the current process while it ran: its exit is no fault
        self._stop_requested = asyncio.Event()  # set by stop(): ends a restart's backoff at once
        self._started_at = 0.0
        self._plan: SandboxPlan | None = None
        self._limit_hit: str | None = None  # set by the watchdog when it stops the process
        self._watchdog: asyncio.Task[None] | None = None
        self._unclosed: list[asyncio.subprocess.Process] = []  # processes whose transport is still open (see _close)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    def output(self, lines: int = 20) -> str:
        """The process's last ``lines`` lines of output."""
        return "\n".join(list(self._lines)[-lines:])

    async def start(self) -> None:
        """Start the process (raises :class:`OSError` when it cannot be started at all, or its sandbox
        cannot be set up here: :class:`~skyjo_ref.sandbox.SandboxUnavailable`)."""
        self._stopping = False
        self._stop_requested.clear()
        await self._spawn()
        self._watcher = asyncio.create_task(self._watch())

    async def _spawn(self) -> None:
        skyjo = {**self.referee_env, "SKYJO_ADDR": self.address, "SKYJO_TOKEN": self.token}
        if self.spec.sandbox.isolation != "strict":  # isolated, its PID namespace dies with the supervisor
            skyjo["SKYJO_PARENT_PID"] = str(
                self.parent_pid or os.getpid()
            )  # SDK bots exit when we are gone (see skyjo_bot.__main__)
        if not self.spec.sandbox.has_network and not self.address.startswith("unix:"):
            raise OSError(f"bot {self.spec.name!r} has no network: it needs a unix: address, not {self.address}")
        plan = plan_for(self.spec.sandbox, self.spec.name, self.view) if sys.platform.startswith("linux") else None
        env = plan.env(self.spec.env, skyjo) if plan is not None else {**os.environ, **self.spec.env, **skyjo}
        self._plan, self._limit_hit = plan, None
        self._stopped_it = False
        self.exited.clear()
        self._started_at = time.monotonic()
        try:
            command = self.spec.process_command()
            self._proc = await _start_process(
                plan.wrap(command) if plan is not None else command,
                cwd=str(self.spec.cwd) if self.spec.cwd is not None and self.view is None else None,
                env=env,
            )
        except BaseException:
            if plan is not None and plan.cgroup is not None:
                remove_group(plan.cgroup)
            raise
        self._unclosed.append(self._proc)
        if plan is not None and (plan.cgroup is not None or plan.bot_cpu is not None):
            self._watchdog = asyncio.create_task(self._guard(self._proc, plan))
        log.debug("bot %s started (pid %d; %s)", self.spec.name, self._proc.pid, self.spec.sandbox.describe())

    async def _guard(self, proc: asyncio.subprocess.Process, plan: SandboxPlan) -> None:
        """Stop the process as soon as a fork in its cgroup fails on the process cap, and the bot's processes
        as soon as together they have used its ``cpu_seconds`` (its group counts all of them, children too)."""
        cpu_seconds = plan.sandbox.limits.cpu_seconds
        while proc.returncode is None:
            if plan.cgroup is not None and pids_limit_hits(plan.cgroup) > 0:
                self._limit_hit = f"process limit {plan.sandbox.limits.processes} reached"
                kill_group(plan.cgroup)
                return
            used = cpu_used_s(plan.bot_cpu) if plan.bot_cpu is not None and cpu_seconds is not None else None
            if used is not None and cpu_seconds is not None and used > cpu_seconds:
                self._limit_hit = f"{TOTAL_CPU_LIMIT} {cpu_seconds} s ({used:.1f} s used by all its processes)"
                assert plan.bot_cpu is not None
                kill_group(plan.bot_cpu, deep=True)
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.WATCHDOG_S):  # not wait_for: see stop()
                    await asyncio.shield(_ended(proc))

    async def _reap_tree(self, proc: asyncio.subprocess.Process) -> None:
        """Kill what the ended process left behind (its process group, its cgroup) and retire its cgroup."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
            self._watchdog = None
        self._signal(proc, signal.SIGKILL)
        plan = self._plan
        if plan is not None:
            for group in (*((plan.cgroup,) if plan.cgroup is not None else ()), *plan.more_cgroups):
                retire_group(group)

    async def _pump(self, proc: asyncio.subprocess.Process) -> None:
        """Keep the process's output (its last lines, and its log), line by line, until it ends: a line longer
        than :data:`LINE_LIMIT` is cut in the log with a note, and the pipe is drained on (the bot plays on)."""
        assert proc.stdout is not None
        sink = self.log_path.open("a", encoding="utf-8") if self.log_path is not None else None
        try:
            while (read := await _read_line(proc.stdout)) is not None:
                raw, cut = read
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if cut:
                    line += f" [line cut: {cut} more bytes not kept; lines are kept up to {LINE_LIMIT} bytes]"
                self._lines.append(line)
                if sink is not None:
                    sink.write(line + "\n")
                    sink.flush()
        finally:
            if sink is not None:
                sink.close()

    async def _watch(self) -> None:
        while True:
            proc = self._proc
            assert proc is not None
            pump = asyncio.create_task(self._pump(proc))
            code = await _ended(proc)
            plan = self._plan
            hits = pids_limit_hits(plan.cgroup) if plan is not None and plan.cgroup is not None else 0
            await self._reap_tree(proc)  # its children hold the output pipe open: they go first
            try:
                async with asyncio.timeout(2.0):  # on timeout the pump is cancelled (and awaited)
                    await pump
            except TimeoutError:  # a child that left the process group (and had no cgroup) still holds it
                log.warning("bot %s: a process it started still holds its output open", self.spec.name)
            self._close(proc)
            if self._stopped_it and code in _STOP_CODES:
                self.exited.set()
                return
            # it ended on its own, even if stop() came first: it had died before the stop's signal, or ended with
            # a code of its own (its supervisor, still running when signalled, reports the bot's own exit)
            tail = self.output(40)
            limit = (
                self._limit_hit
                or _bot_memory_hit(plan, code)
                or classify_exit(plan.sandbox if plan else self.spec.sandbox, code, tail, hits)
            )
            fault = ProcessFault(time.time(), code, time.monotonic() - self._started_at, tail, limit)
            self.faults.append(fault)
            self.exited.set()  # after the fault: whoever wakes on it finds the fault noted
            log.warning("bot %s %s", self.spec.name, fault.describe())
            async with self._fault_noted:
                self._fault_noted.notify_all()
            if self._stopping:
                return
            if self.restarts >= self.max_restarts:
                log.warning("bot %s: not restarted again after %d restarts", self.spec.name, self.restarts)
                return
            with contextlib.suppress(TimeoutError):  # the backoff before a restart, cut short by stop()
                first, longest = self.RESTART_BACKOFF_S
                async with asyncio.timeout(min(longest, first * 2**self.restarts)):
                    await self._stop_requested.wait()
            if self._stopping:
                return
            self.restarts += 1
            try:
                await self._spawn()
            except OSError as exc:
                log.warning("bot %s: cannot restart: %s", self.spec.name, exc)
                return
            if self._stopping and self._proc is not None:  # stop() came while this one started: it saw the old one
                self._stopped_it = True
                self._signal(self._proc, signal.SIGTERM)

    async def wait_fault(self, seen: int) -> None:
        """Until more than ``seen`` faults are recorded (``exited`` is set by then)."""
        async with self._fault_noted:
            await self._fault_noted.wait_for(lambda: len(self.faults) > seen)

    async def stop(self, timeout_s: float = 3.0) -> None:
        """Stop the process: SIGTERM (to its process group), then SIGKILL after ``timeout_s``.

        The waits use ``asyncio.timeout``, not ``wait_for``: Python 3.11's
        ``wait_for`` returns normally when the caller is cancelled in the loop
        turn the awaited thing ends, and a cancelled tournament would go on.
        """
        self._stopping = True
        self._stop_requested.set()
        proc = self._proc
        if proc is not None and proc.returncode is None and not _has_ended(proc.pid):
            self._stopped_it = True
            self._signal(proc, signal.SIGTERM)
            try:
                async with asyncio.timeout(timeout_s):
                    await _ended(proc)
            except TimeoutError:
                self._signal(proc, signal.SIGKILL)
                await _ended(proc)
        if proc is not None and self._watcher is None:
            await self._reap_tree(proc)
        if self._watcher is not None:
            try:
                async with asyncio.timeout(timeout_s):  # on timeout the watcher is cancelled (and awaited)
                    await self._watcher
            except TimeoutError:
                self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        for left in list(self._unclosed):  # the watcher was cancelled before it closed them (a loaded machine)
            await self._reap_tree(left)
            self._close(left)
            await _ended(left)  # bounded: closing a transport kills its process, and its group is killed

    def _close(self, proc: asyncio.subprocess.Process) -> None:
        """Close a process's transport (its output pipe) on this loop, now. Left to the garbage collector, an
        open transport closes after the run's loop has closed, and prints "Exception ignored ... Event loop is
        closed" on the user's terminal. asyncio's Process has no public close; closing kills a process still
        running."""
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()
        with contextlib.suppress(ValueError):
            self._unclosed.remove(proc)

    @staticmethod
    def _signal(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            if os.name == "posix":
                os.killpg(proc.pid, sig)
            else:  # pragma: no cover - no process groups
                proc.send_signal(sig)
