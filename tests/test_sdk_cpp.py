"""The C++ SDK (sdk/cpp): its own tests (ctest, the conformance vectors included), the `new-bot --lang cpp`
template built with its `build` script and played in a league under the default isolation, the protocol's
duties through a real referee, and identical play with the Python reference bot (examples/python/minimal_bot.py).

grpc++'s generated code is slow to compile, so everything is built once and kept in pytest's cache folder:
the SDK alone (its tests and examples) in one CMake build folder, the template project in another; both under
a file lock (xdist workers, parallel runs) and rebuilt only when a source changed (a warm run only checks).
The tests fail (never skip) when the toolchain is missing: scripts/install-test-deps installs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from file_lock import exclusive
from sdk_harness import (
    MINIMAL_BOT,
    RELAXED,
    ROOT,
    CuttableProxy,
    autos,
    check_bot,
    new_project,
    play_match,
    referee,
    start_bot,
)
from skyjo_bot.types import Rules
from skyjo_ref import records
from skyjo_ref.match import MatchSpec, SeatSpec
from skyjo_ref.records import replay
from skyjo_ref.sandbox import Limits, Sandbox, SandboxPlan, classify_exit
from skyjo_ref.server import ServerTls
from tls_pki import make_pki, plays, tls_referee

SDK = ROOT / "sdk" / "cpp"
TEMPLATE = SDK / "template"
PLACEHOLDER = "__BOT_NAME__"
TOOLS = ("cmake", "g++", "pkg-config", "protoc", "grpc_cpp_plugin")
MATCH = [sys.executable, "-m", "skyjo_ref", "match", "--games", "6", "--seed", "identical"]
BUILD_TIMEOUT = 1800  # a cold build on a loaded 2-core machine: about 60 s of CPU each, minutes of wall time


@pytest.fixture(scope="module")
def work(pytestconfig: pytest.Config) -> Iterator[Path]:
    """The folder the builds share (pytest's cache), its lock at work/build.lock."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    assert not missing, f"{', '.join(missing)} not installed: run scripts/install-test-deps (Debian packages)"
    cache = getattr(pytestconfig, "cache", None)  # None with -p no:cacheprovider
    yield cache.mkdir("skyjo-cpp-sdk") if cache is not None else SDK / "build" / "pytest"


def _run(argv: list[str], cwd: Path, timeout: float = BUILD_TIMEOUT) -> str:
    done = subprocess.run(["nice", *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout[-4000:]}{done.stderr[-6000:]}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def sdk_build(work: Path) -> tuple[Path, str]:
    """The SDK built alone (library, tests, examples) and its ctest run: (build folder, ctest's output)."""
    build = work / "sdk-build"
    with exclusive(work / "build.lock"):
        _run(["cmake", "-S", str(SDK), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"], ROOT)
        _run(["cmake", "--build", str(build), "--parallel", "2"], ROOT)
        done = subprocess.run(
            ["ctest", "--output-on-failure", "-V"], cwd=build, capture_output=True, text=True, timeout=300, check=False
        )
    assert done.returncode == 0, f"ctest failed:\n{done.stdout[-6000:]}{done.stderr[-3000:]}"
    return build, done.stdout


def _sync(source: Path, target: Path, name: str, exclude: frozenset[str] = frozenset()) -> None:
    """Copy a folder as new-bot does (PLACEHOLDER -> name), writing only files whose content changed, so a warm
    run's build finds nothing to do."""
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(part in exclude for part in relative.parts) or not path.is_file():
            continue
        into = target / str(relative).replace(PLACEHOLDER, name)
        data = path.read_bytes().replace(PLACEHOLDER.encode(), name.encode())
        if not into.is_file() or into.read_bytes() != data:
            into.parent.mkdir(parents=True, exist_ok=True)
            into.write_bytes(data)
            into.chmod(path.stat().st_mode)


def new_cpp_bot(folder: Path, name: str) -> Path:
    """The project `skyjo-ref new-bot FOLDER --lang cpp` writes (FOLDER's last part is the bot's name)."""
    assert folder.name == name
    return new_project(folder, "cpp")


@pytest.fixture(scope="module")
def cpp_bot(work: Path) -> Path:
    """A new-bot project named `cppbot`, built by its own `build` script: the folder."""
    folder = work / "project" / "cppbot"  # one for every worker: under the lock, a second build finds it done
    with exclusive(work / "build.lock"):
        new_cpp_bot(folder, "cppbot")
        _run([str(folder / "build")], folder)
    assert (folder / json.loads((SDK / "template.json").read_text())["command"]).is_file()
    return folder


def _bot(folder: Path) -> list[str]:
    return [str(folder / "out" / "bot")]


# ------------------------------------------------------------------------------------ the SDK's own


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_the_sdks_own_tests_pass_conformance_vectors_included(sdk_build: tuple[Path, str]) -> None:
    """ctest: the value types, every vector of conformance/views.json, every decision of conformance/matches."""
    _, output = sdk_build
    assert "100% tests passed, 0 tests failed out of 3" in output, output[-3000:]
    views = re.search(r"views: (\d+) vectors", output)
    decisions = re.search(r"matches: (\d+) decisions", output)
    vectors = json.loads((ROOT / "conformance" / "views.json").read_text())["vectors"]
    assert views and int(views.group(1)) == len(vectors), output[-3000:]
    matches = [json.loads(p.read_text()) for p in (ROOT / "conformance" / "matches").glob("*.json")]
    assert decisions and int(decisions.group(1)) == sum(len(m["decisions"]) for m in matches), output[-3000:]


def test_the_sdks_proto_is_the_repositorys() -> None:
    """sdk/cpp/proto/ is a copy (the SDK builds from inside its folder): sdk/cpp/gen-proto refreshes it."""
    copy = SDK / "proto" / "skyjo" / "v1" / "skyjo.proto"
    original = ROOT / "proto" / "skyjo" / "v1" / "skyjo.proto"
    assert copy.read_bytes() == original.read_bytes(), "sdk/cpp/proto is stale: run sdk/cpp/gen-proto"


def test_template_json_names_the_built_program() -> None:
    spec = json.loads((SDK / "template.json").read_text())
    assert spec["command"] == "out/bot"
    assert {"template", "build", "tests", "examples"} <= set(spec["exclude"])
    assert os.access(TEMPLATE / "build", os.X_OK)


# ------------------------------------------------------------------------------- the template bot


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_the_template_plays_a_league_isolated_with_no_strikes(cpp_bot: Path, tmp_path: Path) -> None:
    config = tmp_path / "league.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            name: cpp-league
            rules: {{preset: official, end_score: 40}}
            players_per_game: 2
            deals: 2
            seed: 7
            time_control: {{decision_ms: 10000, bank_ms: 600000, max_strikes: 3, grace_ms: 20000}}
            rating: {{bootstrap: 0}}
            output: out
            bots:
              - {{name: greedy, builtin: greedy}}
              - {{name: cppbot, command: out/bot, cwd: {json.dumps(str(cpp_bot))}}}
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", str(config), "--json", str(tmp_path / "tables.json")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not isolated" not in done.stderr, done.stderr  # the default isolation held (bubblewrap)
    data = json.loads((tmp_path / "tables.json").read_text())
    assert data["games"] == 4
    files = sorted((tmp_path / "out" / "games").glob("*.json"))
    assert len(files) == 4
    for file in files:
        records.check_file(file)
        record = records.load(file)
        assert autos(record) == [], f"{file.name}: the referee played for a bot: {autos(record)[:3]}"
        assert record["meta"]["strikes"] == []
        versions = {bot["name"]: bot.get("version") for bot in record["meta"]["bots"]}
        assert versions["cppbot"] == "0.1.0", versions
    logs = [log.read_text() for log in (tmp_path / "out" / "logs").glob("cppbot*.log")]
    assert logs and all("connected to unix:" in text for text in logs), logs[:1]  # isolated: no network, a socket


def _actions(folder: Path) -> list[list[tuple[int, str, int | None]]]:
    games = []
    for file in sorted(folder.glob("*.json"), key=lambda f: f.name):
        record = records.load(file)
        games.append([(a["seat"], a["act"], a.get("pos")) for rnd in record["rounds"] for a in rnd["actions"]])
    return games


@pytest.mark.timeout(BUILD_TIMEOUT)
@pytest.mark.parametrize("rules", ["official", "french"])
def test_the_template_plays_the_python_reference_bots_moves(cpp_bot: Path, tmp_path: Path, rules: str) -> None:
    """On the same seeded deals against the same seeded greedy, every action of every game is the same."""

    def match(bot: str, out: Path) -> list[list[tuple[int, str, int | None]]]:
        done = subprocess.run(
            [*MATCH, bot, "greedy", "--rules", rules, "--decision-ms", "10000", "--records", str(out)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return _actions(out)

    ours = match(f"cmd:{_bot(cpp_bot)[0]}", tmp_path / "cpp")
    python = match(str(MINIMAL_BOT), tmp_path / "python")
    assert len(ours) == len(python) == 6
    for index, (got, reference) in enumerate(zip(ours, python, strict=True)):
        first = next((i for i, (a, b) in enumerate(zip(got, reference)) if a != b), None)
        assert got == reference, f"game {index}: action {first} differs: {got[first or 0]} != {reference[first or 0]}"


# ---------------------------------------------------------------------------- the protocol's duties


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_the_template_bot_connects_plays_and_stops_on_sigterm(cpp_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("cppbot")
            bot = await start_bot(_bot(cpp_bot), "cppbot", token, server.address)
            seats = [SeatSpec.of_token(token, "cppbot"), SeatSpec.of_builtin("greedy")]
            played = await play_match(server, seats, 3)
            assert bot.proc.returncode is None, "the bot stays up between games"
            await bot.wait_for_text(f"game {played[-1]['meta']['game_id']} over: totals ")  # GameOver reached it
            assert await bot.stop() == 0
        for record in played:
            replay(record)
            assert autos(record) == [] and record["meta"]["strikes"] == []
        text = bot.text()
        assert "connected to 127.0.0.1:" in text and "as 'cppbot'" in text, text
        assert "SIGTERM: closing the session" in text, text
        assert "played 3 games, " in text and "decisions (0 decide errors, 0 strikes)" in text, text

    asyncio.run(main())


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_the_template_bot_reconnects_mid_game_without_deciding_twice(cpp_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            proxy.cut_after_bytes = 15_000
            token = server.issue_token("cppbot")
            bot = await start_bot(_bot(cpp_bot), "cppbot", token, proxy.address)
            seats = [SeatSpec.of_token(token, "cppbot"), SeatSpec.of_builtin("random")]
            played = await play_match(server, seats, 2)
            assert await bot.stop() == 0
            await proxy.stop()
            assert proxy.cuts == 1 and server.sessions[token].connections >= 2
        for record in played:
            replay(record)
            assert autos(record) == [], f"the reconnect cost the bot: {autos(record)}"
        assert "reconnecting in" in bot.text(), bot.text()

    asyncio.run(main())


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_a_refused_token_exits_1_and_bad_usage_exits_2(cpp_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            bot = await start_bot(_bot(cpp_bot), "cppbot", "wrong-token-of-twenty-chars", server.address)
            assert await asyncio.wait_for(bot.proc.wait(), 60) == 1
            await bot.stop()
        assert "error: the referee refused the token: UNAUTHENTICATED" in bot.text(), bot.text()

    asyncio.run(main())
    cases = {
        "error: no referee address: set SKYJO_ADDR (HOST:PORT or unix:PATH)": {},
        "error: no bot token: set SKYJO_TOKEN (skyjo-ref serve issues tokens)": {"SKYJO_ADDR": "127.0.0.1:1"},
        "error: referee address 'nowhere': expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH": {
            "SKYJO_ADDR": "nowhere",
            "SKYJO_TOKEN": "x" * 24,
        },
    }
    for expected, env in cases.items():
        done = subprocess.run(_bot(cpp_bot), env=env, capture_output=True, text=True, timeout=30, check=False)
        assert (done.returncode, done.stderr.strip()) == (2, expected)


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_the_template_bot_plays_over_mutual_tls(cpp_bot: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    pki = make_pki(tmp_path_factory.mktemp("pki"))

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            await plays(server, _bot(cpp_bot), pki.bot_env())

    asyncio.run(main())
    missing = {"SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24, "SKYJO_CA_FILE": str(pki.ca.parent / "none.pem")}
    done = subprocess.run(_bot(cpp_bot), env=missing, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "SKYJO_CA_FILE" in done.stderr, done.stderr
    half = {"SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24, "SKYJO_CA_FILE": str(pki.ca)}
    half["SKYJO_CLIENT_CERT"] = pki.bot_env()["SKYJO_CLIENT_CERT"]
    done = subprocess.run(_bot(cpp_bot), env=half, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "SKYJO_CLIENT_KEY" in done.stderr, done.stderr


@pytest.mark.timeout(BUILD_TIMEOUT)
@pytest.mark.parametrize("fault", ["throw", "swap99"])
def test_a_throwing_decide_becomes_an_error_reply_with_its_text(sdk_build: tuple[Path, str], fault: str) -> None:
    """decide throwing (or calling Action::swap(99)): the referee strikes, records the text, and play goes on."""
    expected = {
        "throw": "std::runtime_error: no idea what to do: the bot gave up",
        "swap99": "skyjo::InvalidAction: swap needs a position 0-11 (pos = 4*row + col), got 99",
    }
    faulty = str(sdk_build[0] / "faulty")

    async def main() -> tuple[dict[str, Any], str]:
        async with referee() as server:
            token = server.issue_token("faulty")
            bot = await start_bot([faulty], "faulty", token, server.address, {"FAULT": fault})
            seats = [SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy")]
            (record,) = await play_match(server, seats, 1)
            assert bot.proc.returncode is None, "a failing decide does not end the bot"
            await bot.wait_for_text("hooks: ")  # GameOver reaches the bot after the record reaches us
            assert await bot.stop() == 0
            assert "decide threw on decision" in bot.text(), bot.text()[-2000:]
            return record, bot.text()

    record, text = asyncio.run(main())
    strikes = record["meta"]["strikes"]
    assert strikes, "the failure was struck"
    assert any(expected[fault] in json.dumps(strike) for strike in strikes), strikes[:2]
    # the hooks saw the game: one start, the public events, each round's result, each strike with what was played
    hooks = re.search(r"hooks: game_start 1, events (\d+), round_results (\d+), strikes (\d+), rank \d", text)
    assert hooks, text[-2000:]
    assert int(hooks.group(1)) > 0 and int(hooks.group(2)) == len(record["rounds"]), (
        hooks.group(0),
        len(record["rounds"]),
    )
    assert int(hooks.group(3)) == len(strikes), (hooks.group(0), len(strikes))


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_sigterm_while_decide_blocks_exits_0_after_the_deadline(sdk_build: tuple[Path, str]) -> None:
    faulty = str(sdk_build[0] / "faulty")

    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("faulty")
            bot = await start_bot([faulty], "faulty", token, server.address, {"FAULT": "hang"})
            seats = (SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy"))
            server.start_match(MatchSpec(seats=seats, rules=Rules(), time_control=RELAXED, games=1, seed="hang"))
            await bot.wait_for_text("deciding forever")
            assert await bot.stop(timeout=10) == 0
        assert "SIGTERM: the session did not close within 0.75 s; exiting now" in bot.text(), bot.text()

    asyncio.run(main())


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_the_bot_ends_when_its_parent_dies(cpp_bot: Path) -> None:
    """SKYJO_PARENT_PID: a kill -9 of the process that started the bot ends the bot at once, with status 0."""
    parent_code = (
        "import os, signal, subprocess, sys\n"
        "subprocess.Popen(sys.argv[1:], env={**os.environ, 'SKYJO_PARENT_PID': str(os.getpid())})\n"
        "signal.pause()\n"
    )

    async def main() -> str:
        async with referee() as server:
            token = server.issue_token("cppbot")
            parent = await start_bot(
                [sys.executable, "-c", parent_code, *_bot(cpp_bot)], "cppbot", token, server.address
            )
            await parent.wait_for_text("as 'cppbot'")  # the bot, through the stderr it shares with its parent
            parent.proc.kill()
            assert parent._reader is not None
            await asyncio.wait_for(parent._reader, 20)  # the shared stderr closes: the bot has exited too
            return parent.text()

    text = asyncio.run(main())
    assert "the parent process is gone: closing the session" in text, text
    assert "played 0 games" in text, text


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_a_bot_out_of_memory_exits_3_named_as_the_memory_limit(sdk_build: tuple[Path, str]) -> None:
    """Under a league's memory limit, std::bad_alloc in decide ends the bot with exit 3 (as the Python SDK's
    MemoryError does): the referee's verdict names the limit."""
    sandbox = Sandbox(Limits(memory_mb=512))
    faulty = str(sdk_build[0] / "faulty")

    async def main() -> tuple[int, str]:
        async with referee() as server:
            token = server.issue_token("faulty")
            bot = await start_bot(
                SandboxPlan(sandbox).wrap([faulty]), "faulty", token, server.address, {"FAULT": "oom"}
            )
            seats = (SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy"))
            server.start_match(MatchSpec(seats=seats, rules=Rules(), time_control=RELAXED, games=1, seed="oom"))
            code = await asyncio.wait_for(bot.proc.wait(), 60)
            await bot.stop()
            return code, bot.text()

    code, text = asyncio.run(main())
    assert code == 3 and "out of memory (std::bad_alloc in decide) under a memory limit" in text, (code, text)
    assert classify_exit(sandbox, code, text) == "memory limit 512 MB"


@pytest.mark.timeout(BUILD_TIMEOUT)
@pytest.mark.parametrize(
    ("state", "sig"),
    [
        ("connecting", signal.SIGTERM),
        ("waiting", signal.SIGINT),
        ("waiting", signal.SIGTERM),
        ("backing off", signal.SIGTERM),
    ],
)
def test_a_signal_ends_the_bot_with_exit_0_in_every_state(cpp_bot: Path, state: str, sig: signal.Signals) -> None:
    """Connecting to a referee that accepts TCP and never answers, waiting for a decision, pausing before a
    reconnect: SIGTERM and SIGINT close the session and the bot exits 0 within seconds."""

    async def main() -> str:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            token = server.issue_token("cppbot")
            if state == "connecting":
                proxy.hold_new = True
            elif state == "backing off":
                await proxy.stop()  # nothing listens there any more: every connection is refused
            bot = await start_bot(_bot(cpp_bot), "cppbot", token, proxy.address)
            if state == "connecting":
                await proxy.wait_connections(1)
            elif state == "waiting":
                await bot.wait_for_text("as 'cppbot'")
            else:
                await bot.wait_for_text("reconnecting in")
            bot.proc.send_signal(sig)
            code = await asyncio.wait_for(bot.proc.wait(), 10)
            await bot.stop()
            await proxy.stop()
            assert code == 0, (code, bot.text())
            return bot.text()

    text = asyncio.run(main())
    assert f"{sig.name}: closing the session" in text, text
    assert "did not close within" not in text, text  # closed cleanly, not by the deadline


@pytest.mark.timeout(300)
def test_the_template_passes_check_bot_as_its_league_runs_it(cpp_bot: Path) -> None:
    """The README's `skyjo-ref check-bot DIR/league.yaml --bot NAME`: every case passes."""
    check_bot(cpp_bot)
