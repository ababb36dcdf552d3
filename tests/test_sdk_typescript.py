"""The TypeScript SDK (sdk/typescript) and its bot template, through real referees and real Node processes.

- the SDK's own tests (``node --test``: the conformance vectors, the vocabulary) pass;
- its generated stubs are what ``scripts/gen.sh`` writes from the proto today;
- a project made like ``skyjo-ref new-bot DIR --lang typescript`` builds with ``DIR/build`` and plays a league
  under the default isolation (a ``unix:`` socket, no network) with no strike, no forfeit, no crash;
- identical play: on the same seeded deals it makes exactly the moves of examples/python/minimal_bot.py;
- reconnects, a refused token, a ``decide`` that throws, SIGTERM.

Needs Node.js 20 and the SDK's packages (``scripts/install-test-deps`` runs ``npm ci`` in sdk/typescript and
sdk/typescript/codegen); fails, never skips, without them.
"""

from __future__ import annotations

import asyncio
import filecmp
import json
import os
import re
import select
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from file_lock import exclusive
from sdk_harness import MINIMAL_BOT, CuttableProxy, autos, play_match, referee, start_bot
from skyjo_ref import records
from skyjo_ref.match import SeatSpec
from skyjo_ref.server import ServerTls
from tls_pki import make_pki, plays, tls_referee

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk" / "typescript"
BOT_NAME = "tsbot"
CLI = [sys.executable, "-m", "skyjo_ref"]
FAIL_ON = ["--fail-on", "forfeit,strike,crash", "--plain"]


def _node() -> str:
    node = shutil.which("node")
    assert node is not None, "node is not installed: install Node.js 20 to run the TypeScript SDK's tests"
    return node


def _npm_installed(folder: Path) -> None:
    assert (folder / "node_modules").is_dir(), (
        f"{folder.relative_to(ROOT)}/node_modules is missing: run scripts/install-test-deps "
        f"(or `npm ci` in {folder.relative_to(ROOT)})"
    )


def _run(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def sdk_dist() -> Path:
    """The SDK compiled in place (sdk/typescript/dist), once per module; shared builds wait on a lock."""
    _node()
    _npm_installed(SDK)
    with exclusive(SDK / "node_modules" / ".skyjo-build.lock"):
        done = _run(["npx", "--no-install", "tsc", "-b"], SDK, 300)
    assert done.returncode == 0, f"tsc failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return SDK / "dist"


def make_project(dest: Path, name: str) -> None:
    """What ``skyjo-ref new-bot DEST --lang typescript`` writes: the template with its name filled in, and the SDK
    (minus template.json's exclusions) in DEST/skyjo-sdk."""
    spec = json.loads((SDK / "template.json").read_text())
    shutil.copytree(SDK / "template", dest)
    for path in sorted(dest.rglob("*"), reverse=True):
        if path.is_file():
            text = path.read_text()
            if "__BOT_NAME__" in text:
                path.write_text(text.replace("__BOT_NAME__", name))
        if "__BOT_NAME__" in path.name:
            path.rename(path.with_name(path.name.replace("__BOT_NAME__", name)))
    shutil.copytree(SDK, dest / "skyjo-sdk", ignore=shutil.ignore_patterns(*spec["exclude"]))
    shutil.copymode(SDK / "template" / "build", dest / "build")


#: A bot whose decide throws in every game's first decision: the SDK must answer with an error reply.
THROWER = """\
import { type Bot, run, type View } from '@skyjo/sdk';
import { decide as reference } from './bot-strategy.js';

const seen = new Set<string>();
const bot: Bot = {
  name: 'thrower',
  decide(view: View) {
    if (!seen.has(view.gameId)) {
      seen.add(view.gameId);
      throw new RangeError(`no idea in ${view.gameId}`);
    }
    return reference(view);
  },
};
await run(bot);
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A bot project made from the template and built with its own ``build`` script (npm ci, tsc)."""
    _node()
    dest = tmp_path_factory.mktemp("ts-project") / BOT_NAME
    make_project(dest, BOT_NAME)
    # a second bot in the same project, for the error-reply test: the reference strategy that throws once a game
    strategy = (dest / "src" / "bot.ts").read_text()
    strategy = strategy[: strategy.index("export const bot")]
    (dest / "src" / "bot-strategy.ts").write_text(strategy)
    (dest / "src" / "thrower.ts").write_text(THROWER)
    done = _run([str(dest / "build")], dest, 540)
    assert done.returncode == 0, f"build failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    assert (dest / "dist" / "bot.js").is_file() and (dest / "skyjo-sdk" / "dist" / "index.js").is_file()
    yield dest


# ------------------------------------------------------------------------------------------ the SDK


@pytest.mark.timeout(400)
def test_sdk_unit_tests_pass(sdk_dist: Path) -> None:
    """The SDK's own ``node --test`` suite: every conformance vector and seeded game, the vocabulary."""
    done = _run([_node(), "--test", "dist/tests/"], SDK, 300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    passed = re.search(r"^# pass (\d+)$", output, re.M)
    failed = re.search(r"^# fail (\d+)$", output, re.M)
    assert passed is not None and failed is not None, output[-2000:]
    assert int(failed.group(1)) == 0 and int(passed.group(1)) >= 8, output[-2000:]


@pytest.mark.timeout(300)
def test_generated_stubs_are_current(tmp_path: Path) -> None:
    """src/gen/ is exactly what scripts/gen.sh writes from proto/ today (never edited by hand)."""
    _npm_installed(SDK / "codegen")
    done = _run([str(SDK / "scripts" / "gen.sh"), str(tmp_path)], SDK, 240)
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = tmp_path / "skyjo" / "v1" / "skyjo_pb.ts"
    committed = SDK / "src" / "gen" / "skyjo" / "v1" / "skyjo_pb.ts"
    assert fresh.is_file()
    assert filecmp.cmp(fresh, committed, shallow=False), (
        "sdk/typescript/src/gen is stale against proto/skyjo/v1/skyjo.proto: run sdk/typescript/scripts/gen.sh"
    )
    assert sorted(p.name for p in (SDK / "src" / "gen").rglob("*.ts")) == ["skyjo_pb.ts"]


def _strategy(path: Path) -> str:
    text = path.read_text()
    match = re.search(r"// reference-strategy-start\n(.*)// reference-strategy-end", text, re.S)
    assert match is not None, f"{path} lacks the reference-strategy markers"
    return match.group(1)


def test_template_plays_the_strategy_the_sdk_tests_check() -> None:
    """The template's decide is, line for line, the one the SDK's conformance tests run."""
    assert _strategy(SDK / "template" / "src" / "bot.ts") == _strategy(SDK / "src" / "tests" / "reference.ts")


def test_template_files() -> None:
    spec = json.loads((SDK / "template.json").read_text())
    assert spec["command"] == "node dist/bot.js"
    build = SDK / "template" / "build"
    assert os.access(build, os.X_OK) and "set -euo pipefail" in build.read_text()
    lock = json.loads((SDK / "template" / "package-lock.json").read_text())
    sdk_manifest = json.loads((SDK / "package.json").read_text())
    assert lock["packages"]["skyjo-sdk"]["version"] == sdk_manifest["version"]
    assert lock["packages"]["skyjo-sdk"]["dependencies"] == sdk_manifest["dependencies"], (
        "the template's package-lock.json is stale against sdk/typescript/package.json: "
        "rebuild it (docs/sdk-typescript.md)"
    )


# ------------------------------------------------------------------------------------- the template


def _league(project: Path, rules: str = "official") -> Path:
    config = project / "league.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            name: {BOT_NAME}-league
            rules: {rules}
            players_per_game: 2
            deals: 3
            seed: 2026
            concurrency: 2
            time_control: {{decision_ms: 10000, bank_ms: 600000, max_strikes: 3, grace_ms: 20000}}
            rating: {{bootstrap: 0}}
            bots:
              - {{name: {BOT_NAME}, command: node dist/bot.js, cwd: .}}
              - {{name: greedy, builtin: greedy}}
            """
        )
    )
    return config


@pytest.mark.timeout(900)
def test_template_builds_and_plays_a_league_isolated(project: Path, tmp_path: Path) -> None:
    """Default isolation: bubblewrap, no network, the referee over a unix: socket; no strike, forfeit or crash."""
    assert shutil.which("bwrap") is not None, "bubblewrap is missing: scripts/install-test-deps installs it"
    config = _league(project)
    done = subprocess.run(
        [
            *CLI,
            "tournament",
            str(config),
            "-o",
            str(tmp_path / "out"),
            "--json",
            str(tmp_path / "tables.json"),
            *FAIL_ON,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "not isolated" not in done.stdout + done.stderr
    data = json.loads((tmp_path / "tables.json").read_text())
    assert data["games"] == 6
    files = sorted((tmp_path / "out" / "games").glob("*.json"))
    assert len(files) == 6
    for file in files:
        record = records.load(file)
        assert autos(record) == [], f"{file.name}: the referee played for a bot"
        assert {(b["name"], b["version"]) for b in record["meta"]["bots"]} == {
            (BOT_NAME, "1.0.0"),
            ("greedy", "builtin"),
        }


def _actions(folder: Path) -> list[list[list[dict[str, Any]]]]:
    """Every game's rounds' actions, in game order."""
    games = []
    for file in sorted(folder.glob("*.json")):
        record = json.loads(file.read_text())
        games.append([rnd["actions"] for rnd in record["rounds"]])
    return games


@pytest.mark.timeout(900)
@pytest.mark.parametrize("rules", ["official", "slovenian"])
def test_identical_play_with_the_python_reference(project: Path, tmp_path: Path, rules: str) -> None:
    """The same seeded deals, the TypeScript template against greedy, then the Python reference against greedy:
    every action of every seat in every game is the same (greedy is deterministic, so any move of ours that
    differed would show)."""
    folders = {}
    for label, bot in (("ts", f"cmd:node {project / 'dist' / 'bot.js'}"), ("py", str(MINIMAL_BOT))):
        folders[label] = tmp_path / label
        records_to = ["--records", str(folders[label])]
        done = subprocess.run(
            [*CLI, "match", bot, "greedy", "--games", "6", "--seed", "identical", "--rules", rules, *records_to],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=400,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    ts, py = _actions(folders["ts"]), _actions(folders["py"])
    assert len(ts) == len(py) == 6
    for game, (ours, reference) in enumerate(zip(ts, py)):
        assert sum(len(r) for r in ours) > 40
        assert ours == reference, f"game {game}: the TypeScript template moved differently from the Python reference"


# --------------------------------------------------------------------------------- the protocol


def test_reconnects_mid_game_and_stops_on_sigterm(project: Path) -> None:
    """A cut connection: the bot comes back with the same token and the referee never plays for it; SIGTERM: exit 0."""

    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            proxy.cut_after_bytes = 15_000
            token = server.issue_token(BOT_NAME)
            bot = await start_bot([_node(), "dist/bot.js", "-v"], BOT_NAME, token, proxy.address, cwd=project)
            played = await play_match(server, [SeatSpec.of_token(token, BOT_NAME), SeatSpec.of_builtin("random")], 2)
            assert bot.proc.returncode is None, f"the bot stays up between games:\n{bot.text()}"
            assert await bot.stop() == 0
            await proxy.stop()
            assert proxy.cuts == 1 and server.sessions[token].connections >= 2
        for record in played:
            records.replay(record)
            assert autos(record) == [], f"the reconnect cost the bot: {autos(record)}"
        assert "reconnecting in" in bot.text() and "SIGTERM: closing the session" in bot.text()

    asyncio.run(main())


def test_refused_token_exits_1(project: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            bot = await start_bot([_node(), "dist/bot.js"], BOT_NAME, "wrong-token", server.address, cwd=project)
            code = await asyncio.wait_for(bot.proc.wait(), 60)
            assert bot._reader is not None
            await bot._reader
        assert code == 1, bot.text()
        assert "error: the referee refused the token: UNAUTHENTICATED" in bot.text()

    asyncio.run(main())


def test_replaced_by_a_second_copy_exits_1(project: Path) -> None:
    """The referee's ABORTED (a newer stream with the same token) ends the old copy with exit 1, naming why;
    a connection that merely broke (reported by Node as ABORTED too) is reconnected instead (the test above)."""

    async def main() -> None:
        async with referee() as server:
            token = server.issue_token(BOT_NAME)
            first = await start_bot([_node(), "dist/bot.js", "-v"], BOT_NAME, token, server.address, cwd=project)
            await first.wait_for_text("connected to")
            second = await start_bot([_node(), "dist/bot.js", "-v"], BOT_NAME, token, server.address, cwd=project)
            await second.wait_for_text("connected to")
            code = await asyncio.wait_for(first.proc.wait(), 60)
            assert first._reader is not None
            await first._reader
            assert await second.stop() == 0
        assert code == 1, first.text()
        assert "error: another connection with the same token replaced this one: ABORTED" in first.text()

    asyncio.run(main())


def test_plays_over_mutual_tls(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """SKYJO_CA_FILE, SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY: a referee that requires client certificates."""
    pki = make_pki(tmp_path_factory.mktemp("pki"))

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            await plays(server, [_node(), "dist/bot.js"], pki.bot_env(), cwd=project)

    asyncio.run(main())


def test_sigterm_while_connecting_and_while_backing_off(project: Path) -> None:
    """SIGTERM ends the bot with exit 0 while a referee accepts TCP and never answers, and in a backoff pause."""

    async def main() -> None:
        async with referee() as server:
            hung = CuttableProxy(server.address)
            await hung.start()
            hung.hold_new = True
            bot = await start_bot([_node(), "dist/bot.js", "-v"], BOT_NAME, "t" * 24, hung.address, cwd=project)
            await hung.wait_connections(1)
            assert await bot.stop() == 0, bot.text()
            await hung.stop()
            assert "SIGTERM: closing the session" in bot.text() and "connected to" not in bot.text()
            refused = CuttableProxy(server.address)
            await refused.start()
            address = refused.address
            await refused.stop()  # nothing listens there now: every connect fails, the bot backs off
            bot = await start_bot([_node(), "dist/bot.js", "-v"], BOT_NAME, "t" * 24, address, cwd=project)
            await bot.wait_for_text("reconnecting in")
            assert await bot.stop() == 0, bot.text()

    asyncio.run(main())


#: A parent that starts the bot with SKYJO_PARENT_PID set to itself, says the bot's pid, then waits on it.
PARENT = (
    "import os, subprocess, sys; "
    "bot = subprocess.Popen(sys.argv[1:], env={**os.environ, 'SKYJO_PARENT_PID': str(os.getpid())}); "
    "print(bot.pid, flush=True); bot.wait()"
)


def test_exits_when_its_parent_dies(project: Path) -> None:
    """SKYJO_PARENT_PID: a kill -9 of the process that started the bot ends the bot (it never outlives a league)."""

    async def main() -> None:
        async with referee() as server:
            token = server.issue_token(BOT_NAME)
            argv = [sys.executable, "-c", PARENT, _node(), "dist/bot.js", "-v"]
            parent = await start_bot(argv, BOT_NAME, token, server.address, cwd=project, stdout=True)
            assert parent.proc.stdout is not None
            bot_pid = int(await asyncio.wait_for(parent.proc.stdout.readline(), 60))
            pidfd = os.pidfd_open(bot_pid)
            try:
                await parent.wait_for_text("connected to")
                parent.proc.kill()
                await parent.proc.wait()
                readable = await asyncio.to_thread(select.select, [pidfd], [], [], 30)
            finally:
                os.close(pidfd)
            assert readable[0], f"the bot outlived its parent by 30 s:\n{parent.text()}"
            assert parent._reader is not None
            await asyncio.wait_for(parent._reader, 30)  # the bot held the pipe: its last lines are read
        assert "the parent process exited: closing the session" in parent.text()

    asyncio.run(main())


def test_bad_usage_exits_2(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYJO_")}
    for args, expected in (
        ([], "error: no referee address"),
        (["--addr", "nowhere", "--token", "t"], "expected HOST:PORT"),
        (["--addr", "127.0.0.1:1", "--token", "t", "--ca-file", "/nonexistent.pem"], "cannot read"),
    ):
        done = subprocess.run(
            [_node(), "dist/bot.js", *args], cwd=project, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2, done.stderr
        assert expected in done.stderr and "    at " not in done.stderr, done.stderr


def test_decide_that_throws_is_an_error_reply_naming_the_line(project: Path) -> None:
    """The SDK answers DecisionReply.error with the exception's text and the bot's .ts line; play goes on."""

    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("thrower")
            bot = await start_bot([_node(), "dist/thrower.js"], "thrower", token, server.address, cwd=project)
            played = await play_match(server, [SeatSpec.of_token(token, "thrower"), SeatSpec.of_builtin("greedy")], 2)
            assert await bot.stop() == 0
        for record in played:
            strikes = record["meta"]["strikes"]
            assert len(strikes) == 1, strikes
            text = json.dumps(strikes[0])
            assert "RangeError: no idea in" in text and re.search(r"thrower\.ts:\d+", text), text
            assert [a for a in autos(record)] and all(tag == "illegal" for _, _, tag in autos(record))

    asyncio.run(main())
