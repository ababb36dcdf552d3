"""The Go SDK (sdk/go): its own tests (`go test`, the conformance vectors included), its committed stubs
current, the `new-bot --lang go` template built by its `build` script and played in a league under the
default isolation, identical play with the Python reference bot, and the protocol's duties of a bot process
(reconnect, refusal, usage, TLS, signals and the parent's death) through a real referee.

Every Go command here uses Go's own build cache and the module cache that scripts/install-test-deps fills
(`go mod download`): a cold run compiles grpc-go once (about 1-3 minutes on a loaded 2-core machine), a warm
one only links. The tests fail
(never skip) when Go 1.26 or protoc is missing: scripts/install-test-deps says how to get them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from go_toolchain import SDK, TEMPLATE, go_env, new_go_bot
from sdk_harness import MINIMAL_BOT, ROOT, CuttableProxy, autos, check_bot, play_match, referee, start_bot
from skyjo_ref import records
from skyjo_ref.match import SeatSpec
from skyjo_ref.records import replay
from skyjo_ref.server import ServerTls
from test_bot_exit import HOW, _end_all, _play_in_background, _start
from tls_pki import make_pki, plays, tls_referee

MATCH = [sys.executable, "-m", "skyjo_ref", "match"]


def _go(env: dict[str, str], args: list[str], cwd: Path, timeout: float) -> str:
    done = subprocess.run(["go", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"go {' '.join(args)} failed:\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return go_env()


@pytest.fixture(scope="module")
def go_bot(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new-bot project named `gopher`, built by its own `build` script: its program."""
    folder = new_go_bot(tmp_path_factory.mktemp("go") / "gopher", "gopher")
    done = subprocess.run([str(folder / "build")], cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"the template did not build:\n{done.stdout}{done.stderr[-4000:]}"
    program = folder / json.loads((SDK / "template.json").read_text())["command"]
    assert program.is_file()
    return program


@pytest.fixture(scope="module")
def stuck_bot(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdk/go/cmd/stuck: a bot whose Decide never returns."""
    out = tmp_path_factory.mktemp("go-stuck") / "stuck"
    _go(env, ["build", "-o", str(out), "./cmd/stuck"], SDK, timeout=900)
    return out


# ------------------------------------------------------------------------------------ the SDK's own


@pytest.mark.timeout(900)
def test_the_sdks_own_tests_pass_and_read_every_conformance_vector(env: dict[str, str]) -> None:
    output = _go(env, ["test", "-count=1", "-v", "./..."], SDK, timeout=900)
    assert re.search(r"^ok\s+skyjo-ref/skyjo\s", output, flags=re.M), output[-3000:]
    assert "--- SKIP" not in output and "--- FAIL" not in output, output[-3000:]
    views = len(json.loads((ROOT / "conformance" / "views.json").read_text())["vectors"])
    assert f"{views} view vectors read and played" in output, output[-3000:]
    matches = sorted((ROOT / "conformance" / "matches").glob("*.json"))
    decisions = sum(len(json.loads(path.read_text())["decisions"]) for path in matches)
    assert f"{len(matches)} matches, {decisions} decisions played as the Python reference does" in output
    assert len(re.findall(r"^--- PASS: ", output, flags=re.M)) >= 8, output[-3000:]


@pytest.mark.timeout(900)
def test_the_committed_stubs_and_proto_copy_are_current(env: dict[str, str], tmp_path: Path) -> None:
    """sdk/go/gen.sh writes the same stubs (pinned plugins, this protoc) and proto copy as are committed."""
    assert shutil.which("protoc"), "protoc is not installed: run scripts/install-test-deps (protobuf-compiler)"
    done = subprocess.run([str(SDK / "gen.sh"), str(tmp_path)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("skyjov1/skyjo.pb.go", "skyjov1/skyjo_grpc.pb.go", "proto/skyjo/v1/skyjo.proto"):
        assert (tmp_path / name).read_bytes() == (SDK / name).read_bytes(), f"sdk/go/{name} is stale: run sdk/go/gen.sh"
    assert (SDK / "proto/skyjo/v1/skyjo.proto").read_bytes() == (ROOT / "proto/skyjo/v1/skyjo.proto").read_bytes()


def test_template_json_names_the_built_program() -> None:
    spec = json.loads((SDK / "template.json").read_text())
    assert spec["command"] == "./bot"
    assert {"template", "template.json", ".bin"} <= set(spec["exclude"])
    assert os.access(TEMPLATE / "build", os.X_OK)
    assert "replace skyjo-ref/skyjo => ./skyjo-sdk" in (TEMPLATE / "go.mod").read_text()


# ------------------------------------------------------------------------------- the template bot


@pytest.mark.timeout(900)
def test_the_template_plays_a_league_isolated_with_no_strikes(go_bot: Path, tmp_path: Path) -> None:
    config = tmp_path / "league.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            name: go-league
            rules: {{preset: official, end_score: 40}}
            players_per_game: 2
            deals: 2
            seed: 7
            time_control: {{decision_ms: 10000, bank_ms: 600000, max_strikes: 3, grace_ms: 20000}}
            rating: {{bootstrap: 0}}
            output: out
            bots:
              - {{name: greedy, builtin: greedy}}
              - {{name: gopher, command: ./bot, cwd: {json.dumps(str(go_bot.parent))}}}
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "skyjo_ref", "tournament", str(config), "--json", str(tmp_path / "tables.json")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not isolated" not in done.stderr, done.stderr  # the default isolation held (bubblewrap)
    assert json.loads((tmp_path / "tables.json").read_text())["games"] == 4
    files = sorted((tmp_path / "out" / "games").glob("*.json"))
    assert len(files) == 4
    for file in files:
        records.check_file(file)
        record = records.load(file)
        assert autos(record) == [], f"{file.name}: the referee played for a bot: {autos(record)[:3]}"
        assert record["meta"]["strikes"] == []
        versions = {bot["name"]: bot.get("version") for bot in record["meta"]["bots"]}
        assert versions["gopher"] == "0.1.0", versions


def _actions(folder: Path) -> list[list[tuple[int, str, int | None]]]:
    games = []
    for file in sorted(folder.glob("*.json"), key=lambda f: f.name):
        record = records.load(file)
        games.append([(a["seat"], a["act"], a.get("pos")) for rnd in record["rounds"] for a in rnd["actions"]])
    return games


@pytest.mark.timeout(900)
@pytest.mark.parametrize("rules", ["official", "slovenian"])
def test_the_template_plays_the_python_reference_bots_moves(go_bot: Path, tmp_path: Path, rules: str) -> None:
    """On the same seeded deals against the same seeded greedy, every action of every game is the same."""

    def match(bot: str, out: Path) -> list[list[tuple[int, str, int | None]]]:
        done = subprocess.run(
            [
                *MATCH,
                bot,
                "greedy",
                "--games",
                "6",
                "--seed",
                "identical",
                "--rules",
                rules,
                "--decision-ms",
                "10000",
                "--records",
                str(out),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return _actions(out)

    ours = match(f"cmd:{go_bot}", tmp_path / "go")
    python = match(str(MINIMAL_BOT), tmp_path / "python")
    assert len(ours) == len(python) == 6
    for index, (game, reference) in enumerate(zip(ours, python, strict=True)):
        first = next((i for i, (a, b) in enumerate(zip(game, reference)) if a != b), None)
        assert game == reference, f"game {index}: action {first} differs: {game[first or 0]} != {reference[first or 0]}"


# ---------------------------------------------------------------------------- the protocol's duties


@pytest.mark.timeout(900)
def test_the_template_bot_connects_plays_and_stops_on_sigterm(go_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("gopher")
            bot = await start_bot([str(go_bot)], "gopher", token, server.address)
            played = await play_match(server, [SeatSpec.of_token(token, "gopher"), SeatSpec.of_builtin("greedy")], 3)
            for record in played:  # the bot has read every GameOver
                await bot.wait_for_text(f"game {record['meta']['game_id']} over: totals")
            assert bot.proc.returncode is None, "the bot stays up between games"
            assert await bot.stop() == 0
        for record in played:
            replay(record)
            assert autos(record) == [] and record["meta"]["strikes"] == []
        text = bot.text()
        assert f"connected to {server.address} as 'gopher' (protocol 1)" in text, text
        assert "SIGTERM: closing the session" in text, text
        assert re.search(r"played 3 games, \d+ decisions \(0 decide errors, 0 strikes\)", text), text

    asyncio.run(main())


@pytest.mark.timeout(900)
def test_the_template_bot_reconnects_mid_game(go_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            proxy.cut_after_bytes = 15_000
            token = server.issue_token("gopher")
            bot = await start_bot([str(go_bot)], "gopher", token, proxy.address)
            played = await play_match(server, [SeatSpec.of_token(token, "gopher"), SeatSpec.of_builtin("random")], 2)
            assert await bot.stop() == 0
            await proxy.stop()
            assert proxy.cuts == 1 and server.sessions[token].connections >= 2
        for record in played:
            replay(record)
            assert autos(record) == [], f"the reconnect cost the Go bot: {autos(record)}"
        assert "reconnecting in" in bot.text()

    asyncio.run(main())


@pytest.mark.timeout(900)
def test_a_refused_token_exits_1_and_no_address_exits_2(go_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            bot = await start_bot([str(go_bot)], "gopher", "wrong-token", server.address)
            assert await asyncio.wait_for(bot.proc.wait(), 60) == 1
            assert bot._reader is not None
            await asyncio.wait_for(bot._reader, 10)
        assert "error: the referee refused the token: Unauthenticated" in bot.text(), bot.text()

    asyncio.run(main())
    done = subprocess.run([str(go_bot)], env={}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "error: no referee address: set SKYJO_ADDR" in done.stderr, done.stderr
    bad = {"SKYJO_ADDR": "nowhere", "SKYJO_TOKEN": "x" * 24}
    done = subprocess.run([str(go_bot)], env=bad, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "expected HOST:PORT" in done.stderr, done.stderr


@pytest.mark.timeout(900)
def test_the_template_bot_plays_over_mutual_tls(go_bot: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """SKYJO_CA_FILE, SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY: the Go bot on a referee that requires certificates."""
    pki = make_pki(tmp_path_factory.mktemp("pki"))

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            await plays(server, [str(go_bot)], pki.bot_env())

    asyncio.run(main())
    missing = {"SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24, "SKYJO_CA_FILE": str(pki.ca.parent / "none.pem")}
    done = subprocess.run([str(go_bot)], env=missing, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "SKYJO_CA_FILE" in done.stderr, done.stderr


@pytest.mark.timeout(900)
def test_the_template_bot_waiting_on_a_silent_referee_exits_on_each_signal(go_bot: Path) -> None:
    """SIGTERM, SIGINT and the parent's death (SKYJO_PARENT_PID) each end it promptly with exit 0."""

    async def main() -> None:
        async with referee() as server:
            proxies, bots = [], []
            for how in HOW:
                proxy = CuttableProxy(server.address)
                await proxy.start()
                bots.append(await _start(how, [str(go_bot)], server.issue_token(how), proxy.address))
                proxies.append(proxy)
            for proxy, bot in zip(proxies, bots, strict=True):
                await bot.bot.wait_for_text("connected to")
                proxy.frozen = True  # the referee goes silent; the connection stays up
            await _end_all(bots)
            for proxy in proxies:
                await proxy.stop()
        for bot in bots:
            if bot.how != "parent death":
                assert bot.bot.proc.returncode == 0, (bot.how, bot.bot.text())

    asyncio.run(main())


@pytest.mark.timeout(900)
@pytest.mark.parametrize("how", HOW)
def test_a_bot_stuck_in_decide_still_exits(stuck_bot: Path, how: str) -> None:
    """A Decide that never returns: the stop deadline ends the process."""

    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("stuck")
            bot = await _start(how, [str(stuck_bot)], token, server.address)
            await _play_in_background(server, token)
            await bot.bot.wait_for_text("deciding for ever")
            await _end_all([bot])
            assert "did not close within" in bot.bot.text()
            if how != "parent death":
                assert bot.bot.proc.returncode == 0, bot.bot.text()

    asyncio.run(main())


@pytest.mark.timeout(300)
def test_the_template_passes_check_bot_as_its_league_runs_it(go_bot: Path) -> None:
    """The README's `skyjo-ref check-bot DIR/league.yaml --bot NAME`: every case passes."""
    check_bot(go_bot.parent)
