"""Trusted Python bots played inside the referee's process (``match --in-process``), and ``--concurrency``.

Real commands in subprocesses; the stuck bots really sleep or spin forever, and
the run must still end, with the stuck seat struck or forfeited.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from skyjo_bot import Action, Bot, View
from skyjo_bot.loader import load_bot
from skyjo_bot.types import TimeControl
from skyjo_ref.match import GamePlan, MatchSpec, Seat, SeatSpec, builtin_seat, run_match
from skyjo_ref.match.threaded import BotThread, ThreadedSeat
from skyjo_ref.server.server import RefereeServer, ServerConfig

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "python" / "minimal_bot.py"


def skyjo(*args: str, timeout: float = 100) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120", "SKYJO_CONTROL_TOKEN": "", "SKYJO_REFEREE": ""}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def without_timing(value: Any) -> Any:
    """The summary with fields that measure time removed (they differ from run to run)."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if not k.endswith("_ms") and "time" not in k}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def summary(tmp_path: Path, name: str, *args: str) -> dict[str, Any]:
    out = skyjo("match", *args, "--json", str(tmp_path / name))
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads((tmp_path / name).read_text())
    return data


def bot_file(tmp_path: Path, name: str, decide_body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import threading\n"
        "from skyjo_bot import Action, Bot, View\n\n"
        f"class {name.title().replace('_', '')}(Bot):\n"
        "    def decide(self, view: View) -> Action:\n"
        f"        {decide_body}\n"
        "        return view.legal_actions[0]\n"
    )
    return path


def test_in_process_plays_the_same_games_as_over_grpc(tmp_path: Path) -> None:
    common = (str(MINIMAL), "greedy", "--games", "6", "--seed", "3")
    over_grpc = summary(tmp_path, "grpc.json", *common, "--records", str(tmp_path / "grpc"))
    in_process = summary(tmp_path, "local.json", *common, "--in-process", "--records", str(tmp_path / "local"))
    assert without_timing(in_process) == without_timing(over_grpc)
    record = json.loads(sorted((tmp_path / "local").glob("*.json"))[0].read_text())
    assert "minimal_bot" in [b["name"] for b in record["meta"]["bots"]]
    assert {"name": "minimal_bot", "version": "in-process"} in record["meta"]["bots"]


def test_concurrency_gives_the_same_results_as_one_game_at_a_time(tmp_path: Path) -> None:
    common = (str(MINIMAL), "greedy", "random", "-n", "3", "--games", "9", "--seed", "11", "--in-process")
    one = summary(tmp_path, "one.json", *common, "--concurrency", "1")
    three = summary(tmp_path, "three.json", *common, "--concurrency", "3")
    assert without_timing(three) == without_timing(one)
    assert one["games"] == 9


def test_a_bot_that_sleeps_forever_is_stopped_each_time_and_the_run_ends(tmp_path: Path) -> None:
    """match --in-process calls the bot in the referee's thread under an alarm: a sleep is interrupted too."""
    sleeper = bot_file(tmp_path, "sleeper", "threading.Event().wait()")
    out = summary(
        tmp_path,
        "s.json",
        str(sleeper),
        "greedy",
        "--games",
        "2",
        "--seed",
        "1",
        "--in-process",
        "--decision-ms",
        "100",
    )
    bots = {b["name"]: b for b in out["bots"]}
    assert out["games"] == 2
    assert bots["sleeper"]["strikes"] == 6 and bots["sleeper"]["forfeits"] == 2  # 3 timeouts a game, then forfeit
    assert bots["greedy"]["strikes"] == 0 and bots["greedy"]["forfeits"] == 0


class Sleeper(Bot):
    def decide(self, view: View) -> Action:
        threading.Event().wait()  # never set: blocks forever where no exception can reach it
        return view.legal_actions[0]


class Spinner(Bot):
    def decide(self, view: View) -> Action:
        while True:
            pass


def play_on_threads(bot: Bot, games: int) -> list[dict[str, Any]]:
    """A match of ``bot`` against greedy, the bot on its own thread (as beside remote seats)."""
    thread = BotThread(bot, "stuck")
    records: list[dict[str, Any]] = []

    async def make_seat(spec: SeatSpec, plan: GamePlan, slot: int) -> Seat:
        if spec.builtin is not None:
            return builtin_seat(spec, "1", plan, slot)
        return ThreadedSeat(thread, spec.name, block_loop=False)

    async def on_game(index: int, record: dict[str, Any]) -> None:
        records.append(record)

    spec = MatchSpec(
        seats=(SeatSpec.of_token("t", "stuck"), SeatSpec.of_builtin("greedy")),
        time_control=TimeControl(decision_ms=100),
        games=games,
        seed="1",
    )
    asyncio.run(run_match(spec, make_seat, on_game))
    return records


def test_on_its_own_thread_a_bot_stuck_in_a_blocking_call_forfeits_every_seat() -> None:
    records = play_on_threads(Sleeper(), 3)
    assert len(records) == 3
    assert [len(r["meta"]["strikes"]) for r in records] == [1, 0, 0]  # one timeout, then it is given up
    assert all([f["seat"] for f in r["meta"]["forfeited"]] == [0] for r in records)
    assert "stuck" in records[2]["meta"]["forfeited"][0]["reason"]


def test_on_its_own_thread_a_spinning_bot_is_stopped_and_asked_again() -> None:
    records = play_on_threads(Spinner(), 2)
    assert [len(r["meta"]["strikes"]) for r in records] == [3, 3]  # stopped each time: 3 timeouts, then forfeit
    assert {s["reason"] for r in records for s in r["meta"]["strikes"]} == {"timeout"}


def test_a_bot_that_spins_forever_is_stopped_each_time_and_struck(tmp_path: Path) -> None:
    spinner = bot_file(tmp_path, "spinner", "while True: pass")
    out = summary(
        tmp_path,
        "s.json",
        str(spinner),
        "greedy",
        "--games",
        "2",
        "--seed",
        "1",
        "--in-process",
        "--decision-ms",
        "100",
        "--records",
        str(tmp_path / "games"),
    )
    bots = {b["name"]: b for b in out["bots"]}
    assert bots["spinner"]["strikes"] == 6 and bots["spinner"]["forfeits"] == 2  # 3 timeouts, then forfeit
    record = json.loads(sorted((tmp_path / "games").glob("*.json"))[0].read_text())
    assert {s["reason"] for s in record["meta"]["strikes"]} == {"timeout"}


def test_a_bot_that_raises_gets_illegal_strikes(tmp_path: Path) -> None:
    raiser = bot_file(tmp_path, "raiser", "raise ValueError('no idea')")
    out = summary(
        tmp_path,
        "r.json",
        str(raiser),
        "greedy",
        "--games",
        "2",
        "--seed",
        "1",
        "--in-process",
        "--records",
        str(tmp_path / "games"),
    )
    bots = {b["name"]: b for b in out["bots"]}
    assert bots["raiser"]["strikes"] == 6 and bots["raiser"]["forfeits"] == 2
    record = json.loads(sorted((tmp_path / "games").glob("*.json"))[0].read_text())
    assert "raised ValueError: no idea" in record["meta"]["strikes"][0]["answered"]


def test_in_process_refuses_a_running_referee(tmp_path: Path) -> None:
    out = skyjo("match", str(MINIMAL), "greedy", "--in-process", "--referee", "127.0.0.1:1", "--control-token", "x")
    assert out.returncode == 2
    assert "--in-process" in out.stderr and "--referee" in out.stderr and "Traceback" not in out.stderr


def test_in_process_names_a_broken_bot_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(
        "from skyjo_bot import Bot\nclass B(Bot):\n    def decide(self, view) -> None:\n        return (\n"
    )
    out = skyjo("match", str(broken), "greedy", "--in-process", "--games", "2")
    assert out.returncode == 2
    assert "broken.py" in out.stderr and "Traceback" not in out.stderr


def test_in_process_beside_a_bot_process(tmp_path: Path) -> None:
    """A cmd: bot still plays over gRPC while the Python file plays in-process (on its own thread)."""
    command = f"cmd:{sys.executable} -m skyjo_bot run {MINIMAL}"
    out = summary(
        tmp_path,
        "m.json",
        str(MINIMAL),
        command,
        "--games",
        "2",
        "--seed",
        "2",
        "--in-process",
        "--records",
        str(tmp_path / "games"),
    )
    assert out["games"] == 2
    assert all(b["strikes"] == 0 and b["forfeits"] == 0 for b in out["bots"])
    record = json.loads(sorted((tmp_path / "games").glob("*.json"))[0].read_text())
    versions = sorted(b["version"] for b in record["meta"]["bots"])
    assert versions.count("in-process") == 1, versions  # the cmd: bot reports its own version


def test_an_in_process_bots_prints_go_to_stderr_not_into_json_on_stdout(tmp_path: Path) -> None:
    talker = bot_file(tmp_path, "talker", "print('thinking...')")
    out = skyjo("match", str(talker), "greedy", "--games", "2", "--seed", "1", "--in-process", "--json", "-")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["games"] == 2
    assert "thinking..." in out.stderr


def test_an_in_process_token_outlives_its_matches() -> None:
    """Issued tokens are released once idle; an in-process bot's is not (its next game needs it)."""

    async def main() -> None:
        server = RefereeServer(ServerConfig(address="127.0.0.1:0", token_unused_ms=20, token_idle_ms=20))
        await server.start()
        try:
            local = server.add_in_process_bot("minimal", load_bot(str(MINIMAL)))
            spec = MatchSpec(seats=(SeatSpec.of_token(local, "minimal"), SeatSpec.of_builtin("greedy")), seed="1")
            finished = [item async for item in server.watch(server.start_match(spec))]
            assert finished[-1] == (None, "") and len(finished) == 2
            server.issue_token("nobody")
            assert not await server.wait_tokens(0, 2.0)  # the issued token goes, the in-process one stays
            assert list(server.sessions) == [local]
        finally:
            await server.stop(0)

    asyncio.run(main())
