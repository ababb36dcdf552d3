"""The Rust SDK (sdk/rust): its own tests (`cargo test`), the `new-bot --lang rust` template built with its
`build` script and played in a league under the default isolation, the protocol's duties through a real
referee, and identical play with the Python reference bot (examples/python/minimal_bot.py).

Every cargo command of this file shares one target folder in pytest's cache (CARGO_TARGET_DIR, under a
file lock) and builds the release profile: the SDK's tests, its examples and the template bot reuse the
same compiled dependencies (tonic, prost, tokio, rustls), so a cold run compiles them once and a warm run
only relinks. The release profile is the template's own (its `build` script runs `cargo build --release
--locked` unchanged) but for one setting the tests override with cargo's environment: no optimisation
(CARGO_PROFILE_RELEASE_OPT_LEVEL=0). Most of a cold build's CPU is LLVM optimising tonic, tokio, rustls and
ring; what these tests check (it compiles, it plays every move the reference plays, the protocol's duties,
check-bot) does not depend on it, and the profile's other settings (no debug assertions, no overflow
checks, panics that unwind, stripped debug info) stay those a user's build has.
The tests fail (never skip) when cargo is missing: scripts/install-test-deps says how to get it and
prefetches the crates (`cargo fetch --locked`).
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

SDK = ROOT / "sdk" / "rust"
TEMPLATE = SDK / "template"
PLACEHOLDER = "__BOT_NAME__"
MATCH = [sys.executable, "-m", "skyjo_ref", "match", "--games", "6", "--seed", "identical"]


@pytest.fixture(scope="module")
def cargo_env(pytestconfig: pytest.Config) -> Iterator[tuple[dict[str, str], Path]]:
    """The environment for cargo (the shared target folder) and the lock that guards it."""
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    assert Path(cargo).is_file(), (
        "cargo is not installed: install Rust 1.88+ (rustup.rs), see scripts/install-test-deps"
    )
    cache = getattr(pytestconfig, "cache", None)  # None with -p no:cacheprovider
    work = cache.mkdir("skyjo-rust") if cache is not None else SDK / "target" / "pytest"
    env = {
        **os.environ,
        "PATH": f"{Path(cargo).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "CARGO_TARGET_DIR": str(work / "target"),
        "CARGO_TERM_COLOR": "never",
        "CARGO_PROFILE_RELEASE_OPT_LEVEL": "0",  # the compile's CPU, not the bot's speed (the docstring says why)
    }
    env.pop("RUSTFLAGS", None)  # the same flags for every build here, or nothing is shared
    yield env, work / "build.lock"


def _cargo(env: dict[str, str], lock: Path, args: list[str], cwd: Path, timeout: float) -> str:
    with exclusive(lock):
        done = subprocess.run(
            ["cargo", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    assert done.returncode == 0, f"cargo {' '.join(args)} failed:\n{done.stdout[-4000:]}{done.stderr[-6000:]}"
    return done.stdout + done.stderr


def new_rust_bot(folder: Path, name: str) -> Path:
    """The project `skyjo-ref new-bot FOLDER --lang rust` writes (FOLDER's last part is the bot's name)."""
    assert folder.name == name
    return new_project(folder, "rust")


@pytest.fixture(scope="module")
def sdk_tests(cargo_env: tuple[dict[str, str], Path]) -> str:
    env, lock = cargo_env
    return _cargo(env, lock, ["test", "--release", "--locked"], SDK, timeout=1500)


@pytest.fixture(scope="module")
def rust_bot(cargo_env: tuple[dict[str, str], Path]) -> Path:
    """A new-bot project named `rusty`, built by its own `build` script: the folder."""
    env, lock = cargo_env
    with exclusive(lock):
        # a fixed folder next to the target folder, copied with the files' times: a warm run rebuilds nothing of
        # the SDK (cargo's fingerprints are paths and times), only the few files new-bot fills in
        folder = lock.parent / f"project-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}" / "rusty"
        shutil.rmtree(folder.parent, ignore_errors=True)
        new_rust_bot(folder, "rusty")
        done = subprocess.run(
            [str(folder / "build")], cwd=folder, env=env, capture_output=True, text=True, timeout=1500, check=False
        )
    assert done.returncode == 0, f"the template did not build:\n{done.stdout}{done.stderr[-6000:]}"
    assert (folder / json.loads((SDK / "template.json").read_text())["command"]).is_file()
    return folder


@pytest.fixture(scope="module")
def examples(cargo_env: tuple[dict[str, str], Path]) -> Path:
    """The SDK's example programs (a faulty bot, the bare tonic client), built: their folder."""
    env, lock = cargo_env
    _cargo(env, lock, ["build", "--release", "--locked", "--examples"], SDK, timeout=1500)
    return Path(env["CARGO_TARGET_DIR"]) / "release" / "examples"


def _bot(folder: Path) -> list[str]:
    return [str(folder / "target" / "release" / "bot")]


# ------------------------------------------------------------------------------------ the SDK's own


@pytest.mark.timeout(1800)
def test_the_sdks_own_tests_pass_conformance_vectors_included(sdk_tests: str) -> None:
    """`cargo test`: unit tests, and tests/conformance.rs on every vector of conformance/ (the template's strategy)."""
    results = re.findall(r"test result: (\w+)\. (\d+) passed; (\d+) failed", sdk_tests)
    assert results and all(word == "ok" and failed == "0" for word, _, failed in results), sdk_tests[-3000:]
    assert sum(int(passed) for _, passed, _ in results) >= 25, sdk_tests[-3000:]
    for vectors in ("every_vector_reads_as_its_view_and_gets_the_reference_answer", "every_seeded_match_gets_the_"):
        assert re.search(rf"test {vectors}\w* \.\.\. ok", sdk_tests), f"the conformance test {vectors} did not pass"


def test_the_sdks_proto_is_the_repositorys() -> None:
    """sdk/rust/proto/ is a copy (the crate builds from inside its folder): sdk/rust/gen-proto refreshes it."""
    copy = SDK / "proto" / "skyjo" / "v1" / "skyjo.proto"
    original = ROOT / "proto" / "skyjo" / "v1" / "skyjo.proto"
    assert copy.read_bytes() == original.read_bytes(), "sdk/rust/proto is stale: run sdk/rust/gen-proto"


def test_template_json_names_the_built_program() -> None:
    spec = json.loads((SDK / "template.json").read_text())
    assert spec["command"] == "target/release/bot"
    assert {"template", "target"} <= set(spec["exclude"])
    assert os.access(TEMPLATE / "build", os.X_OK)


# ------------------------------------------------------------------------------- the template bot


@pytest.mark.timeout(1800)
def test_the_template_plays_a_league_isolated_with_no_strikes(rust_bot: Path, tmp_path: Path) -> None:
    config = tmp_path / "league.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            name: rust-league
            rules: {{preset: official, end_score: 40}}
            players_per_game: 2
            deals: 2
            seed: 7
            time_control: {{decision_ms: 10000, bank_ms: 600000, max_strikes: 3, grace_ms: 20000}}
            rating: {{bootstrap: 0}}
            output: out
            bots:
              - {{name: greedy, builtin: greedy}}
              - {{name: rusty, command: target/release/bot, cwd: {json.dumps(str(rust_bot))}}}
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
        assert versions["rusty"] == "0.1.0", versions


def _actions(folder: Path) -> list[list[tuple[int, str, int | None]]]:
    games = []
    for file in sorted(folder.glob("*.json"), key=lambda f: f.name):
        record = records.load(file)
        games.append([(a["seat"], a["act"], a.get("pos")) for rnd in record["rounds"] for a in rnd["actions"]])
    return games


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("rules", ["official", "french"])
def test_the_template_plays_the_python_reference_bots_moves(rust_bot: Path, tmp_path: Path, rules: str) -> None:
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

    rust = match(f"cmd:{_bot(rust_bot)[0]}", tmp_path / "rust")
    python = match(str(MINIMAL_BOT), tmp_path / "python")
    assert len(rust) == len(python) == 6
    for index, (ours, reference) in enumerate(zip(rust, python, strict=True)):
        first = next((i for i, (a, b) in enumerate(zip(ours, reference)) if a != b), None)
        assert ours == reference, f"game {index}: action {first} differs: {ours[first or 0]} != {reference[first or 0]}"


# ---------------------------------------------------------------------------- the protocol's duties


@pytest.mark.timeout(1800)
def test_the_template_bot_connects_plays_and_stops_on_sigterm(rust_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("rusty")
            bot = await start_bot(_bot(rust_bot), "rusty", token, server.address)
            seats = [SeatSpec.of_token(token, "rusty"), SeatSpec.of_builtin("greedy")]
            played = await play_match(server, seats, 3)
            assert bot.proc.returncode is None, "the bot stays up between games"
            assert await bot.stop() == 0
        for record in played:
            replay(record)
            assert autos(record) == [] and record["meta"]["strikes"] == []
        text = bot.text()
        assert "connected to 127.0.0.1:" in text and "as 'rusty'" in text, text
        assert "SIGTERM: closing the session" in text, text
        assert re.search(r"played \d+ games, \d+ decisions \(0 decide errors, 0 strikes\)", text), text

    asyncio.run(main())


@pytest.mark.timeout(1800)
def test_the_template_bot_reconnects_mid_game_without_deciding_twice(rust_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            proxy.cut_after_bytes = 15_000
            token = server.issue_token("rusty")
            bot = await start_bot(_bot(rust_bot), "rusty", token, proxy.address)
            seats = [SeatSpec.of_token(token, "rusty"), SeatSpec.of_builtin("random")]
            played = await play_match(server, seats, 2)
            assert await bot.stop() == 0
            await proxy.stop()
            assert proxy.cuts == 1 and server.sessions[token].connections >= 2
        for record in played:
            replay(record)
            assert autos(record) == [], f"the reconnect cost the bot: {autos(record)}"
        assert "reconnecting in" in bot.text()

    asyncio.run(main())


@pytest.mark.timeout(1800)
def test_a_refused_token_exits_1_and_no_address_exits_2(rust_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            bot = await start_bot(_bot(rust_bot), "rusty", "wrong-token-of-twenty-chars", server.address)
            assert await asyncio.wait_for(bot.proc.wait(), 60) == 1
            await bot.stop()
        assert "error: the referee refused the token: UNAUTHENTICATED" in bot.text(), bot.text()

    asyncio.run(main())
    done = subprocess.run(_bot(rust_bot), env={}, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and done.stderr.strip() == (
        "error: no referee address: set SKYJO_ADDR (HOST:PORT or unix:PATH)"
    ), done.stderr
    bad = {"SKYJO_ADDR": "nowhere", "SKYJO_TOKEN": "x" * 24}
    done = subprocess.run(_bot(rust_bot), env=bad, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "expected HOST:PORT" in done.stderr, done.stderr


@pytest.mark.timeout(1800)
def test_the_template_bot_plays_over_mutual_tls(rust_bot: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    pki = make_pki(tmp_path_factory.mktemp("pki"))

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            await plays(server, _bot(rust_bot), pki.bot_env())

    asyncio.run(main())
    missing = {"SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24, "SKYJO_CA_FILE": str(pki.ca.parent / "none.pem")}
    done = subprocess.run(_bot(rust_bot), env=missing, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "SKYJO_CA_FILE" in done.stderr, done.stderr


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("fault", ["error", "panic"])
def test_a_failing_decide_becomes_an_error_reply_with_its_text(examples: Path, fault: str) -> None:
    """decide returning Err, or panicking: the referee strikes, records the text, and play goes on."""
    expected = {"error": "no idea what to do: the bot gave up", "panic": "panic: on purpose (at examples/faulty.rs:"}

    async def main() -> dict[str, Any]:
        async with referee() as server:
            token = server.issue_token("faulty")
            bot = await start_bot([str(examples / "faulty")], "faulty", token, server.address, {"FAULT": fault})
            seats = [SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy")]
            (record,) = await play_match(server, seats, 1)
            assert bot.proc.returncode is None, "a failing decide does not end the bot"
            assert await bot.stop() == 0
            return record

    record = asyncio.run(main())
    strikes = record["meta"]["strikes"]
    assert strikes, "the failure was struck"
    assert any(expected[fault] in json.dumps(strike) for strike in strikes), strikes[:2]


@pytest.mark.timeout(1800)
def test_sigterm_while_decide_blocks_exits_0_after_the_deadline(examples: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("faulty")
            bot = await start_bot([str(examples / "faulty")], "faulty", token, server.address, {"FAULT": "hang"})
            seats = (SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy"))
            server.start_match(MatchSpec(seats=seats, rules=Rules(), time_control=RELAXED, games=1, seed="hang"))
            await bot.wait_for_text("deciding forever")
            assert await bot.stop(timeout=10) == 0
        assert "SIGTERM: the session did not close within 0.75 s; exiting now" in bot.text(), bot.text()

    asyncio.run(main())


@pytest.mark.timeout(1800)
def test_the_bot_ends_when_its_parent_dies(rust_bot: Path) -> None:
    """SKYJO_PARENT_PID: a kill -9 of the process that started the bot ends the bot at once, with status 0."""
    parent_code = (
        "import os, signal, subprocess, sys\n"
        "subprocess.Popen(sys.argv[1:], env={**os.environ, 'SKYJO_PARENT_PID': str(os.getpid())})\n"
        "signal.pause()\n"
    )

    async def main() -> str:
        async with referee() as server:
            token = server.issue_token("rusty")
            parent = await start_bot(
                [sys.executable, "-c", parent_code, *_bot(rust_bot)], "rusty", token, server.address
            )
            await parent.wait_for_text("as 'rusty'")  # the bot, through the stderr it shares with its parent
            parent.proc.kill()
            assert parent._reader is not None
            await asyncio.wait_for(parent._reader, 20)  # the shared stderr closes: the bot has exited too
            return parent.text()

    text = asyncio.run(main())
    assert "the parent process is gone: closing the session" in text, text
    assert "played 0 games" in text, text


@pytest.mark.timeout(1800)
def test_a_bot_out_of_memory_is_reported_as_the_memory_limit(examples: Path) -> None:
    """Under a league's memory limit Rust aborts with 'memory allocation of N bytes failed': the referee's
    verdict names the limit."""
    sandbox = Sandbox(Limits(memory_mb=512))

    async def main() -> tuple[int, str]:
        async with referee() as server:
            token = server.issue_token("faulty")
            argv = SandboxPlan(sandbox).wrap([str(examples / "faulty")])
            bot = await start_bot(argv, "faulty", token, server.address, {"FAULT": "oom"})
            seats = (SeatSpec.of_token(token, "faulty"), SeatSpec.of_builtin("greedy"))
            server.start_match(MatchSpec(seats=seats, rules=Rules(), time_control=RELAXED, games=1, seed="oom"))
            code = await asyncio.wait_for(bot.proc.wait(), 60)
            await bot.stop()
            return code, bot.text()

    code, text = asyncio.run(main())
    assert code == -signal.SIGABRT and "memory allocation of 4294967296 bytes failed" in text, (code, text)
    assert classify_exit(sandbox, code, text) == "memory limit 512 MB"


@pytest.mark.timeout(300)
def test_the_template_passes_check_bot_as_its_league_runs_it(rust_bot: Path) -> None:
    """The README's `skyjo-ref check-bot DIR/league.yaml --bot NAME`: every case passes."""
    check_bot(rust_bot)
