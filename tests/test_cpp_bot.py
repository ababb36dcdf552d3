"""The C++ example bot (examples/cpp), built with Debian's grpc++ packages, plays through a real referee.

The build runs examples/cpp/build-debian.sh, the command its README gives:
protoc with grpc_cpp_plugin (the guide's C++ generation command), then g++.
Stubs, object files and the bot live in pytest's cache folder (.pytest_cache,
not in git) and are rebuilt only when the proto or bot.cc change: the first
build takes about 45 s on a loaded 2-core machine, later ones well under a
second. The tests fail (never skip) when the toolchain is missing:
scripts/install-test-deps installs it.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from file_lock import exclusive
from sdk_harness import ROOT, autos, play_match, referee, start_bot
from skyjo_ref.match import SeatSpec
from skyjo_ref.records import replay
from skyjo_ref.server import ServerTls
from tls_pki import make_pki, plays, tls_referee

CPP_DIR = ROOT / "examples" / "cpp"
TOOLS = ("g++", "pkg-config", "protoc", "grpc_cpp_plugin")


@pytest.fixture(scope="module")
def cpp_bot(pytestconfig: pytest.Config) -> Path:
    """The C++ bot, built as its README says."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    assert not missing, f"{', '.join(missing)} not installed: run scripts/install-test-deps (Debian packages)"
    cache = getattr(pytestconfig, "cache", None)  # None with -p no:cacheprovider
    work = cache.mkdir("skyjo-cpp") if cache is not None else CPP_DIR / ".build"  # both ignored by git
    out = work / "skyjo-cpp-bot"
    with exclusive(work / "build.lock"):  # one build at a time (xdist workers, parallel runs); later ones are no-ops
        done = subprocess.run(
            [str(CPP_DIR / "build-debian.sh"), str(out)],
            env={"PATH": "/usr/bin:/bin", "SKYJO_CPP_WORK": str(work)},
            capture_output=True,
            text=True,
            timeout=110,
        )
    assert done.returncode == 0, f"the C++ bot did not build:\n{done.stdout}{done.stderr}"
    assert out.is_file()
    return out


def test_cpp_bot_plays_against_greedy_with_no_strikes(cpp_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("cpp")
            bot = await start_bot([str(cpp_bot)], "cpp", token, server.address)
            seats = [SeatSpec.of_token(token, "cpp"), SeatSpec.of_builtin("greedy")]
            records = await play_match(server, seats, 2)
            assert bot.proc.returncode is None, "the C++ bot stays up between games"
            assert await bot.stop() == 0
        for record in records:
            replay(record)
            assert autos(record) == [], f"the referee played for the C++ bot: {autos(record)}"
            assert record["meta"]["bots"][0]["version"] == "1.0.0"
        assert "connected as 'cpp'" in bot.text() and "SIGTERM: closing the session" in bot.text()

    asyncio.run(main())


def test_cpp_bot_refused_token_exits_1(cpp_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            bot = await start_bot([str(cpp_bot)], "cpp", "wrong", server.address)
            assert await asyncio.wait_for(bot.proc.wait(), 30) == 1
            assert bot._reader is not None
            await asyncio.wait_for(bot._reader, 10)
        assert "error: the referee refused the token" in bot.text()

    asyncio.run(main())


def test_cpp_bot_plays_over_mutual_tls_with_skyjo_ca_file(
    cpp_bot: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """SKYJO_CA_FILE, SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY: the C++ bot on a referee that requires certificates."""
    pki = make_pki(tmp_path_factory.mktemp("pki"))

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            await plays(server, [str(cpp_bot)], pki.bot_env())

    asyncio.run(main())
    missing = {"SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24, "SKYJO_CA_FILE": str(pki.ca.parent / "none.pem")}
    done = subprocess.run([str(cpp_bot)], env=missing, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "SKYJO_CA_FILE" in done.stderr, done.stderr
