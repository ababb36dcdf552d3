"""The execution room's API as check-bot and the commands call it: a real referee on loopback, real bot processes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from skyjo_bot.types import Rules, TimeControl
from skyjo_ref.errors import UsageError
from skyjo_ref.execution.room import BotProcesses, open_referee, open_room
from skyjo_ref.execution.types import RefereeConfig
from skyjo_ref.match import MatchSpec
from skyjo_ref.players import parse_bot_spec

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "examples" / "python" / "minimal_bot.py"


def test_a_line_up_seated_in_a_room_plays_and_everything_stops(tmp_path: Path) -> None:
    async def main() -> tuple[int, str, bool]:
        async with open_room(RefereeConfig(), TimeControl(), log_dir=tmp_path) as room:
            seats = [await room.seat("mine", parse_bot_spec(str(BOT))), await room.seat("g", parse_bot_spec("greedy"))]
            await room.wait_connected()
            records, end = await room.play(MatchSpec(seats=tuple(seats), rules=Rules(), games=2, seed="room"))
            process = room.processes["mine"]
        return len(records), end.error, process.running

    games, error, running = asyncio.run(main())
    assert (games, error, running) == (2, "", False)
    assert (tmp_path / "mine.log").is_file()


def test_bot_processes_start_as_the_league_does_on_a_referee_the_caller_runs(tmp_path: Path) -> None:
    async def main() -> tuple[bool, str]:
        async with open_referee(RefereeConfig(), TimeControl()) as referee:
            assert referee.server is not None
            processes = BotProcesses(
                parse_bot_spec(str(BOT)), tcp_address=referee.address, unix_address=None, log_dir=tmp_path
            )
            try:
                token = referee.server.issue_token("mine")
                process = await processes.start(token)
                connected = await referee.wait_connected(token, 60.0)
                assert process.token == token and process.max_restarts == 0
                return connected, processes.address()
            finally:
                await processes.aclose()

    connected, address = asyncio.run(main())
    assert connected and address.startswith("127.0.0.1:")
    assert (tmp_path / "01.log").is_file()


def test_a_running_referee_without_its_control_token_is_refused() -> None:
    async def main() -> None:
        async with open_referee(RefereeConfig(address="127.0.0.1:1"), TimeControl()):
            pass

    with pytest.raises(UsageError, match="control token"):
        asyncio.run(main())
