"""The Go example bot (examples/go), built offline with Debian's Go packages, plays through a real referee.

The build runs examples/go/build-debian.sh, the command its README gives:
protoc with protoc-gen-go and protoc-gen-go-grpc (the guide's Go generation
command), then `go build` in GOPATH mode against /usr/share/gocode. Its work
files and Go's build cache live in pytest's cache folder (.pytest_cache, not
in git), so only the first build compiles grpc-go (about 40 s on a loaded
2-core machine); later builds take about a second. The tests fail (never
skip) when the toolchain is missing: scripts/install-test-deps installs it.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from file_lock import exclusive
from sdk_harness import ROOT, CuttableProxy, autos, play_match, referee, start_bot
from skyjo_ref.match import SeatSpec
from skyjo_ref.records import replay
from skyjo_ref.server import ServerTls
from tls_pki import make_pki, plays, tls_referee

GO_DIR = ROOT / "examples" / "go"
TOOLS = ("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")


@pytest.fixture(scope="module")
def go_bot(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go bot, built as its README says."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    assert not missing, f"{', '.join(missing)} not installed: run scripts/install-test-deps (Debian packages)"
    cache = getattr(pytestconfig, "cache", None)  # None with -p no:cacheprovider
    work = cache.mkdir("skyjo-go") if cache is not None else GO_DIR / ".build"  # both ignored by git
    out = tmp_path_factory.mktemp("go") / "skyjo-go-bot"
    with exclusive(work / "build.lock"):  # its GOPATH folder is rewritten by each build: one at a time
        done = subprocess.run(
            [str(GO_DIR / "build-debian.sh"), str(out)],
            env={"PATH": "/usr/bin:/bin", "HOME": str(work), "SKYJO_GO_WORK": str(work)},
            capture_output=True,
            text=True,
            timeout=110,
        )
    assert done.returncode == 0, f"the Go bot did not build:\n{done.stdout}{done.stderr}"
    assert out.is_file()
    return out


def test_go_bot_plays_against_greedy_with_no_strikes(go_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            token = server.issue_token("go")
            bot = await start_bot([str(go_bot)], "go", token, server.address)
            seats = [SeatSpec.of_token(token, "go"), SeatSpec.of_builtin("greedy")]
            records = await play_match(server, seats, 3)
            assert bot.proc.returncode is None, "the Go bot stays up between games"
            assert await bot.stop() == 0
        for record in records:
            replay(record)
            assert autos(record) == [], f"the referee played for the Go bot: {autos(record)}"
            assert record["meta"]["strikes"] == []
            assert record["meta"]["bots"][0]["version"] == "1.0.0"
        text = bot.text()
        assert "connected as 'go'" in text and "terminated: closing the session" in text
        assert re.search(r"played \d+ games, \d+ decisions", text), text

    asyncio.run(main())


def test_go_bot_reconnects_mid_game(go_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            proxy.cut_after_bytes = 15_000
            token = server.issue_token("go")
            bot = await start_bot([str(go_bot)], "go", token, proxy.address)
            records = await play_match(server, [SeatSpec.of_token(token, "go"), SeatSpec.of_builtin("random")], 2)
            assert await bot.stop() == 0
            await proxy.stop()
            assert proxy.cuts == 1 and server.sessions[token].connections >= 2
        for record in records:
            replay(record)
            assert autos(record) == [], f"the reconnect cost the Go bot: {autos(record)}"
        assert "reconnecting in" in bot.text()

    asyncio.run(main())


def test_go_bot_refused_token_exits_1(go_bot: Path) -> None:
    async def main() -> None:
        async with referee() as server:
            bot = await start_bot([str(go_bot)], "go", "wrong", server.address)
            assert await asyncio.wait_for(bot.proc.wait(), 30) == 1
            assert bot._reader is not None
            await asyncio.wait_for(bot._reader, 10)
        assert "error: the referee refused the token: Unauthenticated" in bot.text()

    asyncio.run(main())


def test_go_bot_without_address_exits_2(go_bot: Path) -> None:
    done = subprocess.run([str(go_bot)], env={}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "set SKYJO_ADDR" in done.stderr


def test_go_bot_plays_over_mutual_tls_with_skyjo_ca_file(
    go_bot: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """SKYJO_CA_FILE, SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY: the Go bot on a referee that requires certificates."""
    pki = make_pki(tmp_path_factory.mktemp("pki"))

    async def main() -> None:
        async with tls_referee(ServerTls(pki.server_cert, pki.server_key, pki.ca)) as server:
            await plays(server, [str(go_bot)], pki.bot_env())

    asyncio.run(main())
    missing = {"SKYJO_ADDR": "127.0.0.1:1", "SKYJO_TOKEN": "x" * 24, "SKYJO_CA_FILE": str(pki.ca.parent / "none.pem")}
    done = subprocess.run([str(go_bot)], env=missing, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "SKYJO_CA_FILE" in done.stderr, done.stderr
