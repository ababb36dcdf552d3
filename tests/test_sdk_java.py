"""The Java SDK (sdk/java): its own JUnit tests, its template built like `new-bot --lang java` writes it, played
in a league under the default isolation, and move for move the same as the Python reference bot.

Cost (2 busy cores, Maven's cache warm): the JUnit run about 90 s wall / 25 s CPU, the template's build about
60 s / 25 s, the games about 40 s.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from sdk_harness import check_bot, new_project
from skyjo_ref.server import ServerTls
from tls_pki import make_pki, plays, tls_referee

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk" / "java"
SKYJO_REF = [sys.executable, "-m", "skyjo_ref"]

pytestmark = pytest.mark.skipif(
    shutil.which("mvn") is None or shutil.which("java") is None, reason="needs Maven and a JDK 17 (mvn, java)"
)


#: Maven's own JVM with the quick JIT only and the serial collector: a build is a short run, where C2's
#: compiles and a parallel collector cost CPU they never pay back (about 40% of Maven's CPU, measured on
#: `mvn test`); the classes and jars it writes are the same. (The forked test JVM and the bot keep theirs.)
MAVEN_ENV = {**os.environ, "MAVEN_OPTS": f"{os.environ.get('MAVEN_OPTS', '')} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}


def template_command() -> str:
    return str(json.loads((SDK / "template.json").read_text())["command"])


def copy_template(folder: Path, name: str) -> Path:
    """What `skyjo-ref new-bot DIR --lang java` writes, DIR = folder/name."""
    return new_project(folder / name, "java")


@pytest.fixture(scope="module")
def java_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The template built by its own `build` script; the project folder."""
    project = copy_template(tmp_path_factory.mktemp("java-bot"), "javabot")
    done = subprocess.run(["nice", str(project / "build")], env=MAVEN_ENV, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"build failed:\n{done.stdout}\n{done.stderr}"
    assert (project / "bot" / "target" / "bot.jar").is_file()
    return project


def test_proto_copy_is_current() -> None:
    """The SDK builds its stubs from its own copy of the proto (sync-proto makes it)."""
    copy = SDK / "proto" / "skyjo" / "v1" / "skyjo.proto"
    original = ROOT / "proto" / "skyjo" / "v1" / "skyjo.proto"
    assert copy.read_bytes() == original.read_bytes(), "sdk/java/proto is stale: run sdk/java/sync-proto"


@pytest.mark.timeout(900)
def test_junit_suite_passes() -> None:
    """`mvn test` in sdk/java: unit tests and the client against a scripted referee (Unix socket and TCP)."""
    reports = SDK / "target" / "surefire-reports"
    shutil.rmtree(reports, ignore_errors=True)
    done = subprocess.run(
        ["nice", "mvn", "-q", "-B", "test"], cwd=SDK, env=MAVEN_ENV, capture_output=True, text=True, timeout=880
    )
    assert done.returncode == 0, f"mvn test failed:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for report in reports.glob("TEST-*.xml"):
        suite = ElementTree.parse(report).getroot()
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    assert totals["tests"] >= 15, totals
    assert totals["failures"] == totals["errors"] == totals["skipped"] == 0, totals


@pytest.mark.timeout(900)
def test_template_plays_an_isolated_memory_limited_league_with_no_strikes(java_bot: Path, tmp_path: Path) -> None:
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: java-league\nrules: official\nplayers_per_game: 2\ndeals: 2\nseed: 11\n"
        "limits: {memory_mb: 1024}\n"  # what docs/sdk-java.md promises the template's command starts under
        f"bots:\n  - {{name: javabot, command: {template_command()}, cwd: {java_bot}}}\n"
        "  - {name: greedy, builtin: greedy}\n"
    )
    out = tmp_path / "tables.json"
    done = subprocess.run(
        [*SKYJO_REF, "tournament", str(league), "--json", str(out), "--fail-on", "forfeit,strike,crash", "--plain"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    text = out.read_text()
    assert "javabot" in text


def reference_moves(records: Path) -> list[list[tuple[str, int | None]]]:
    """The non-greedy seat's actions, game by game, from a folder of game records."""
    games = []
    for path in sorted(records.glob("*.json")):
        record = json.loads(path.read_text())
        seats = {i for i, name in enumerate(record["players"]) if name != "greedy"}
        assert len(seats) == 1, record["players"]
        games.append([(a["act"], a.get("pos")) for r in record["rounds"] for a in r["actions"] if a["seat"] in seats])
    return games


@pytest.mark.timeout(600)
def test_template_plays_the_moves_of_the_python_reference_bot(java_bot: Path, tmp_path: Path) -> None:
    java_command = template_command().replace("bot/target/", f"{java_bot}/bot/target/")
    for bot, folder in ((f"cmd:{java_command}", "java"), (str(ROOT / "examples/python/minimal_bot.py"), "python")):
        done = subprocess.run(
            [
                *SKYJO_REF,
                "match",
                bot,
                "greedy",
                "--games",
                "6",
                "--seed",
                "java-identical",
                "--records",
                str(tmp_path / folder),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{bot}: {done.stdout}\n{done.stderr}"
    java, python = reference_moves(tmp_path / "java"), reference_moves(tmp_path / "python")
    assert len(java) == len(python) == 6
    kinds = {act for game in python for act, _ in game}
    assert kinds == {"reveal", "draw", "take", "swap"}, kinds  # every kind of decision was compared
    for index, (mine, reference) in enumerate(zip(java, python, strict=True)):
        assert mine == reference, f"game {index}: the Java bot played differently from minimal_bot.py"


def test_without_an_address_it_exits_2_in_one_line(java_bot: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYJO_")}
    done = subprocess.run(bot_argv(java_bot), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == "error: no referee address: pass --addr HOST:PORT or set SKYJO_ADDR\n"


def bot_argv(java_bot: Path, *args: str) -> list[str]:
    return ["java", "-jar", str(java_bot / "bot/target/bot.jar"), *args]


def test_no_referee_exits_1_after_giving_up(java_bot: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        bot_argv(java_bot, "--addr", f"unix:{tmp_path}/none.sock", "--token", "t", "--give-up", "0.3"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: no session with the referee at unix:")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_backing_off_exits_0(java_bot: Path, tmp_path: Path, sig: signal.Signals) -> None:
    bot = subprocess.Popen(
        bot_argv(java_bot, "--addr", f"unix:{tmp_path}/none.sock", "--token", "t", "-v"),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert bot.stderr is not None
        for line in bot.stderr:  # waits for the client to be in its backoff pause
            if "reconnecting in" in line:
                break
        bot.send_signal(sig)
        assert bot.wait(timeout=30) == 0
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()


def test_plays_over_mutual_tls_with_skyjo_ca_file(java_bot: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """SKYJO_CA_FILE, SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY: the Java bot on a referee that requires certificates."""
    pki = make_pki(tmp_path_factory.mktemp("pki"))

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            await plays(server, bot_argv(java_bot), pki.bot_env())

    asyncio.run(main())
    missing = {"SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24, "SKYJO_CA_FILE": str(pki.ca.parent / "none.pem")}
    done = subprocess.run(bot_argv(java_bot), env=missing, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "SKYJO_CA_FILE" in done.stderr, done.stderr


@pytest.mark.timeout(300)
def test_the_template_passes_check_bot_as_its_league_runs_it(java_bot: Path) -> None:
    """The README's `skyjo-ref check-bot DIR/league.yaml --bot NAME`: every case passes."""
    check_bot(java_bot)
