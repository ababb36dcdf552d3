"""The Node.js example bot (examples/node) plays real games through a real referee."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from sdk_harness import MINIMAL_BOT, NODE_DIR, CuttableProxy, autos, play_match, referee, sdk_argv, start_bot
from skyjo_ref import records
from skyjo_ref.match import SeatSpec
from skyjo_ref.records import replay


def _node_argv() -> list[str]:
    """The command that runs the Node bot; fails (never skips) when Node or its packages are missing."""
    node = shutil.which("node")
    assert node is not None, "node is not installed: install Node.js 18+ to run the Node example bot's tests"
    assert (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(), (
        "examples/node/node_modules is missing: run `npm ci` in examples/node (the README's test command does)"
    )
    return [node, str(NODE_DIR / "bot.js")]


def test_node_bot_plays_against_python_bots() -> None:
    argv = _node_argv()

    async def main() -> None:
        async with referee() as server:
            node_token, py_token = server.issue_token("node"), server.issue_token("minimal")
            node = await start_bot(argv, "node", node_token, server.address, cwd=NODE_DIR)
            py = await start_bot(sdk_argv(MINIMAL_BOT), "minimal", py_token, server.address)
            seats = [SeatSpec.of_token(node_token, "node"), SeatSpec.of_token(py_token, "minimal")]
            records = await play_match(server, [*seats, SeatSpec.of_builtin("greedy")], 3)
            assert node.proc.returncode is None, "the Node bot stays up between games"
            assert await node.stop() == 0
            assert await py.stop() == 0
        for record in records:
            replay(record)
            assert autos(record) == [], f"the referee played for a bot: {autos(record)}"
            assert record["meta"]["bots"][0]["version"] == "1.0.0"
        assert "connected to" in node.text() and "SIGTERM: closing the session" in node.text()

    asyncio.run(main())


def test_node_bot_reconnects_mid_game() -> None:
    argv = _node_argv()

    async def main() -> None:
        async with referee() as server:
            proxy = CuttableProxy(server.address)
            await proxy.start()
            proxy.cut_after_bytes = 15_000
            token = server.issue_token("node")
            node = await start_bot(argv, "node", token, proxy.address, cwd=NODE_DIR)
            records = await play_match(server, [SeatSpec.of_token(token, "node"), SeatSpec.of_builtin("random")], 2)
            assert await node.stop() == 0
            await proxy.stop()
            assert proxy.cuts == 1 and server.sessions[token].connections >= 2
        for record in records:
            replay(record)
            assert autos(record) == [], f"the reconnect cost the bot: {autos(record)}"
        assert "reconnecting in" in node.text()

    asyncio.run(main())


def test_node_bot_refused_token_exits_1() -> None:
    argv = _node_argv()

    async def main() -> None:
        async with referee() as server:
            node = await start_bot(argv, "node", "wrong", server.address, cwd=NODE_DIR)
            code = await asyncio.wait_for(node.proc.wait(), 30)
            assert node._reader is not None
            await node._reader
        assert code == 1
        assert "error: the referee refused the token: UNAUTHENTICATED" in node.text()

    asyncio.run(main())


def test_node_bot_in_a_tournament_against_python_bots(tmp_path: Path) -> None:
    """`skyjo-ref tournament` through the real CLI: the Node bot (a command bot), an SDK bot and greedy."""
    node, _ = _node_argv()
    config = tmp_path / "league.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            name: node-league
            rules: {{preset: official, end_score: 40}}
            players_per_game: 2
            deals: 1
            seed: 5
            concurrency: 2
            time_control: {{decision_ms: 10000, bank_ms: 600000, max_strikes: 3, grace_ms: 20000}}
            rating: {{bootstrap: 0}}
            output: out
            bots:
              - {{name: greedy, builtin: greedy}}
              - {{name: minimal, python: {json.dumps(str(MINIMAL_BOT))}}}
              - name: node
                command: [{json.dumps(node)}, bot.js]
                cwd: {json.dumps(str(NODE_DIR))}
                root: {json.dumps(str(NODE_DIR.parents[1]))}  # isolated, it sees the folder with the bot and the proto
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
    data = json.loads((tmp_path / "tables.json").read_text())
    assert data["games"] == 6  # 3 tables x 1 deal x 2 seatings
    assert {b["name"]: b["games"] for b in data["bots"]} == {"greedy": 4, "minimal": 4, "node": 4}
    files = sorted((tmp_path / "out" / "games").glob("*.json"))
    assert len(files) == 6
    for file in files:
        records.check_file(file)
        record = records.load(file)
        autos = [a for rnd in record["rounds"] for a in rnd["actions"] if "auto" in a]
        assert autos == [], f"{file.name}: the referee played for a bot: {autos[:3]}"


def test_the_node_bots_copy_of_the_proto_is_the_repositorys() -> None:
    """The Node bot loads the protocol from its own folder (an isolated bot sees only that folder): the copy
    must be the repository's protocol, byte for byte (after a change: cp proto/skyjo/v1/skyjo.proto
    examples/node/proto/skyjo/v1/)."""
    copy = NODE_DIR / "proto" / "skyjo" / "v1" / "skyjo.proto"
    assert copy.read_bytes() == (NODE_DIR.parents[1] / "proto" / "skyjo" / "v1" / "skyjo.proto").read_bytes()
    assert "'..', '..', 'proto'" not in (NODE_DIR / "bot.js").read_text(encoding="utf-8")
