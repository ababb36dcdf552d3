"""Helpers for the SDK and Node bot tests: a real referee on loopback, real bot subprocesses."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skyjo_bot.types import Rules, TimeControl
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.newbot import new_bot
from skyjo_ref.server.server import RefereeServer, ServerConfig

ROOT = Path(__file__).resolve().parent.parent
MINIMAL_BOT = ROOT / "examples" / "python" / "minimal_bot.py"
NODE_DIR = ROOT / "examples" / "node"

#: Runs Python with SIGINT at its default, then execs ``python ARGS``: put it in front of a command a
#: test sends SIGINT to. A process started in the background by a non-interactive shell (``cmd &``)
#: inherits SIGINT *ignored*, and so would the CLI the test starts: Ctrl-C would then do nothing.
WITH_CTRL_C = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])",
]

#: Generous: these machines are shared and loaded.
RELAXED = TimeControl(decision_ms=10_000, bank_ms=600_000, max_strikes=1000, grace_ms=20_000)


@dataclass
class BotProcess:
    """A bot started as a subprocess, with its stderr collected."""

    name: str
    token: str
    proc: asyncio.subprocess.Process
    stderr: list[str] = field(default_factory=list)
    _reader: asyncio.Task[None] | None = None
    _news: asyncio.Condition = field(default_factory=asyncio.Condition)
    _eof: bool = False

    async def wait_for_text(self, text: str, timeout: float = 60.0) -> None:
        """Until ``text`` appears on the bot's stderr (fails after ``timeout``, or if the bot exits first)."""

        async def seen() -> None:
            async with self._news:
                await self._news.wait_for(lambda: text in self.text() or self._eof)

        try:
            await asyncio.wait_for(seen(), timeout)
        except TimeoutError:
            raise AssertionError(f"bot {self.name} never wrote {text!r}; stderr:\n{self.text()}") from None
        assert text in self.text(), f"bot {self.name} exited before writing {text!r}; stderr:\n{self.text()}"

    async def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, then wait; returns the exit code (kills and fails if it hangs)."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            raise AssertionError(f"bot {self.name} did not exit within {timeout} s of SIGTERM") from None
        if self._reader is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._reader, 5)
        return code

    def text(self) -> str:
        return "".join(self.stderr)


async def start_bot(
    argv: Sequence[str],
    name: str,
    token: str,
    addr: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    *,
    stdout: bool = False,
) -> BotProcess:
    """Start ``argv`` with the referee's address and token; ``stdout``: keep its stdout readable (a pipe)."""
    full_env = {**os.environ, "SKYJO_ADDR": addr, "SKYJO_TOKEN": token, "PYTHONUNBUFFERED": "1", **(env or {})}
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=full_env,
        cwd=str(cwd or ROOT),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE if stdout else asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    bot = BotProcess(name, token, proc)

    async def read() -> None:
        assert proc.stderr is not None
        try:
            async for line in proc.stderr:
                bot.stderr.append(line.decode(errors="replace"))
                async with bot._news:
                    bot._news.notify_all()
        finally:
            bot._eof = True
            async with bot._news:
                bot._news.notify_all()

    bot._reader = asyncio.create_task(read())
    return bot


def node_argv() -> list[str]:
    """The command that runs the Node example bot; fails (never skips) when Node or its packages are missing."""
    node = shutil.which("node")
    assert node is not None, "node is not installed: install Node.js 18+ to run the Node example bot's tests"
    assert (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(), (
        "examples/node/node_modules is missing: run `npm ci` in examples/node (the README's test command does)"
    )
    return [node, str(NODE_DIR / "bot.js")]


def sdk_argv(spec: str | Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "skyjo_bot", "run", str(spec), *extra]


@contextlib.asynccontextmanager
async def referee(time_control: TimeControl = RELAXED) -> AsyncIterator[RefereeServer]:
    server = RefereeServer(ServerConfig(address="127.0.0.1:0", time_control=time_control))
    await server.start()
    try:
        yield server
    finally:
        await server.stop(0.5)


async def play_match(
    server: RefereeServer,
    seats: Sequence[SeatSpec],
    games: int,
    *,
    seed: str = "sdk-test",
    rules: Rules | None = None,
    time_control: TimeControl = RELAXED,
    timeout: float = 90.0,
) -> list[dict[str, Any]]:
    """Start a match and return its records in game order; fails on a match error."""
    spec = MatchSpec(
        seats=tuple(seats),
        rules=rules or Rules.from_dict({"end_score": 60}),
        time_control=time_control,
        games=games,
        seed=seed,
    )
    match_id = server.start_match(spec)
    records: dict[int, dict[str, Any]] = {}

    async def follow() -> str:
        async for index, payload in server.watch(match_id):
            if index is None:
                return payload
            records[index] = json.loads(payload)
        return "watch ended without a result"

    error = await asyncio.wait_for(follow(), timeout)
    assert error == "", f"match failed: {error}"
    return [records[i] for i in sorted(records)]


def autos(record: dict[str, Any]) -> list[tuple[int, int, str]]:
    """(round, action index, auto tag) of every action the referee chose for a seat."""
    return [
        (r, i, action["auto"])
        for r, rnd in enumerate(record["rounds"])
        for i, action in enumerate(rnd["actions"])
        if "auto" in action
    ]


# ---------------------------------------------------------------------- a TCP proxy we can cut


class CuttableProxy:
    """Forwards TCP to the referee; :meth:`cut` drops every live connection (a network failure)."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.address = ""
        self.connections = 0
        self.down_bytes = 0  # referee -> bot
        self.cut_after_bytes: int | None = None
        self.cuts = 0
        #: True: new connections are accepted and held, never forwarded nor answered (a hung referee)
        self.hold_new = False
        #: True: nothing more is forwarded on any connection, which stay open (a referee that froze)
        self.frozen = False
        self._accepted = asyncio.Condition()
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.address = f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        self._drop()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        self.cuts += 1
        self._drop()

    async def wait_connections(self, count: int, timeout: float = 60.0) -> None:
        """Until ``count`` connections have been accepted in all."""

        async def reached() -> None:
            async with self._accepted:
                await self._accepted.wait_for(lambda: self.connections >= count)

        await asyncio.wait_for(reached(), timeout)

    def _drop(self) -> None:
        for writer in list(self._writers):
            transport = writer.transport
            transport.abort()
        self._writers.clear()

    async def _serve(self, bot_reader: asyncio.StreamReader, bot_writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        async with self._accepted:
            self._accepted.notify_all()
        if self.hold_new:
            self._writers.add(bot_writer)
            with contextlib.suppress(OSError, ConnectionError):
                while await bot_reader.read(65536):  # read and ignore: never a byte back
                    pass
            self._writers.discard(bot_writer)
            return
        try:
            ref_reader, ref_writer = await asyncio.open_connection(*self.target)
        except OSError:
            bot_writer.close()
            return
        self._writers |= {bot_writer, ref_writer}

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, down: bool) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await reader.read(65536):
                    if self.frozen:
                        continue  # swallowed: the other side never hears of it
                    writer.write(data)
                    if down:
                        self.down_bytes += len(data)
                        if self.cut_after_bytes is not None and self.down_bytes >= self.cut_after_bytes:
                            self.cut_after_bytes = None
                            self.cut()
                            return
                    await writer.drain()
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()

        await asyncio.gather(pipe(bot_reader, ref_writer, False), pipe(ref_reader, bot_writer, True))
        self._writers -= {bot_writer, ref_writer}


def check_bot(project: Path, timeout: float = 240) -> dict[str, Any]:
    """``skyjo-ref check-bot PROJECT/league.yaml --bot NAME`` on a built new-bot project, as its README says to run
    it: every case must pass (n/a where the league's isolation rules a case out); the JSON results."""
    report = project / "check-bot.json"
    league = str(project / "league.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "check-bot", league, "--bot", project.name, "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"check-bot failed:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    results: dict[str, Any] = json.loads(report.read_text())
    assert results["ok"] and sum(case["status"] == "pass" for case in results["cases"]) >= 25, results
    return results


def new_project(folder: Path, lang: str) -> Path:
    """The project ``skyjo-ref new-bot FOLDER --lang LANG`` writes (the bot named after FOLDER's last part),
    written by new-bot itself into a fresh folder beside it, then copied into FOLDER file by file, writing only
    files whose content changed: a cached build folder (Rust, C++) then rebuilds only what new-bot changed."""
    staging = folder.parent / ".new-bot" / folder.name
    shutil.rmtree(staging.parent, ignore_errors=True)
    new_bot(staging, lang)
    for path in sorted(staging.rglob("*")):
        if not path.is_file():
            continue
        into = folder / path.relative_to(staging)
        data = path.read_bytes()
        if not into.is_file() or into.read_bytes() != data:
            into.parent.mkdir(parents=True, exist_ok=True)
            into.write_bytes(data)
        into.chmod(path.stat().st_mode)
    shutil.rmtree(staging.parent, ignore_errors=True)
    return folder
