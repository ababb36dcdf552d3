"""``skyjo-ref play``: a person's seat, driven through its input.

The end-to-end tests run the real command (in-process referee, the person's
seat over gRPC through the SDK client) in a subprocess and answer its prompts
through a pipe, reading what it prints; the unit tests drive :class:`HumanBot`
on the rules engine directly with scripted lines.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from skyjo_bot import Action, DecisionKind, Event, EventKind, Rules
from skyjo_ref.bots import make_builtin
from skyjo_ref.cli import app
from skyjo_ref.cli.play_view import HumanBot, QuitGame, parse_input
from skyjo_ref.records import check_file
from skyjo_ref.rules.engine import Game

TIMEOUT_S = 90.0


# ---------------------------------------------------------------- the real command


class Driver:
    """The ``play`` command in a subprocess: read its output up to each prompt, answer a line."""

    def __init__(self, *args: str, env_over: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1", "NO_COLOR": "1", **(env_over or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skyjo_ref", "play", *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.chunks: queue.Queue[bytes] = queue.Queue()
        self.output = ""
        self.eof = False
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 4096):
            self.chunks.put(chunk)
        self.chunks.put(b"")

    def next_prompt(self) -> str | None:
        """The output since the last answer, up to and including a prompt; None when the process ended."""
        start = len(self.output)
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            text = self.output[start:]
            if text.rstrip(" ").endswith(">"):
                return text
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.proc.kill()
                raise AssertionError(f"no prompt within {TIMEOUT_S} s; output so far:\n{self.output[-3000:]}")
            try:
                chunk = self.chunks.get(timeout=remaining)
            except queue.Empty:
                continue
            if not chunk:
                self.eof = True
                return None
            self.output += chunk.decode("utf-8", "replace")

    def answer(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def finish(self) -> tuple[int, str, str]:
        code = self.proc.wait(timeout=TIMEOUT_S)
        while not self.eof:
            chunk = self.chunks.get(timeout=TIMEOUT_S)
            self.eof = not chunk
            self.output += chunk.decode("utf-8", "replace")
        assert self.proc.stderr is not None
        return code, self.output, self.proc.stderr.read().decode("utf-8", "replace")


def first_hidden(prompt: str) -> int:
    found = re.findall(r"hidden: ([\d ]+)\)", prompt)
    assert found, f"no hidden positions in prompt {prompt[-300:]!r}"
    return int(found[-1].split()[0])


def scripted_answers(driver: Driver) -> Iterator[str]:
    """Draw, then discard and reveal the first hidden card; with wrong inputs mixed in."""
    mistakes = {"open": ["banana", "r99"], "turn": ["s3", "take 4"], "drew": ["x", "reveal"]}
    while (prompt := driver.next_prompt()) is not None:
        joined = " ".join(prompt.splitlines())  # a narrow terminal wraps the prompt line
        last = joined[max(joined.rfind(key) for key in ("Open a card", "Your turn", "You drew")) :]
        if "Open a card" in last:
            kind = "open"
            good = f"r{first_hidden(last)}"
        elif "Your turn" in last:
            kind = "turn"
            good = "d"
        elif "You drew" in last:
            kind = "drew"
            good = f"r{first_hidden(last)}"
        else:
            raise AssertionError(f"unexpected prompt {last!r}")
        if mistakes[kind]:
            yield mistakes[kind].pop(0)
            retry = driver.next_prompt()
            assert retry is not None and "legal now:" in retry, f"no hint after a wrong input: {retry!r}"
        yield good


def test_play_a_whole_game_through_the_prompt() -> None:
    driver = Driver("greedy", "--seed", "7", "--option", "end_score=1", "--name", "tester")
    answers = 0
    for line in scripted_answers(driver):
        driver.answer(line)
        answers += 1
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\nstdout:\n{out[-3000:]}\nstderr:\n{err}"
    assert "Traceback" not in out + err
    assert answers > 10
    # the wrong inputs were re-asked with a reason
    assert "unknown action 'banana'" in out
    assert "reveal needs a position 0-11" in out
    assert "not possible yet: first draw or take" in out
    # the table was shown: labelled positions, the discard, the hand, the other player's moves
    assert "0:?" in out and "11:" in out
    assert "discard top:" in out and "you hold:" in out
    assert "greedy (seat 1)" in out
    # the round result and the final result
    assert "Round 1 over" in out
    assert "Game over" in out
    assert re.search(r"You win!|You share the win!|You finished rank 2 of 2", out)


def test_two_games_at_three_players_with_a_bot_process() -> None:
    """The person in the last seat, a built-in bot and an SDK bot file run as its own process."""
    strong = os.path.join(os.path.dirname(__file__), "..", "examples", "python", "strong_bot.py")
    driver = Driver("greedy", strong, "--seat", "2", "--games", "2", "--seed", "9", "-o", "end_score=1")
    for line in scripted_answers(driver):
        driver.answer(line)
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\nstdout:\n{out[-3000:]}\nstderr:\n{err}"
    assert out.count("Game over") == 2
    assert "You are seat 2" in out and "strong_bot (seat 1)" in out
    assert "2 games played; you won" in out


def test_end_of_input_leaves_cleanly() -> None:
    driver = Driver("random", "greedy", "--seat", "1", "--seed", "3")
    prompt = driver.next_prompt()
    assert prompt is not None and "You are seat 1" in prompt
    driver.answer("r0")
    assert driver.next_prompt() is not None
    driver.close_input()
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\n{out[-2000:]}\n{err}"
    assert "You left after 0 finished game(s)." in out
    assert "Traceback" not in out + err


def test_quit_leaves_cleanly() -> None:
    driver = Driver("greedy", "--seed", "5")
    assert driver.next_prompt() is not None
    driver.answer("quit")
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\n{out[-2000:]}\n{err}"
    assert "You left" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchbot"], "unknown bot 'nosuchbot'"),
        (["greedy", "--rules", "klingon"], "unknown rules preset 'klingon'"),
        (["greedy", "--option", "end_score=-3"], "end_score must be an integer > 0"),
        (["greedy", "--seat", "5"], "--seat 5 is not a seat of this table: expected 0 to 1"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before anything starts: the CLI's entry point in-process (no referee is started)."""
    monkeypatch.setattr(sys, "argv", ["skyjo-ref", "play", *args])
    with pytest.raises(SystemExit) as exited:
        app.main()
    err = capsys.readouterr().err
    assert exited.value.code == 2, err
    assert message in " ".join(err.split())
    assert "Traceback" not in err


# ---------------------------------------------------------------- HumanBot on the engine


def scripted(lines: list[str]) -> tuple[HumanBot, Console]:
    console = Console(record=True, width=120, force_terminal=False)
    feed = iter(lines)

    def read(prompt: str) -> str:
        console.print(prompt, end="")
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return HumanBot(console, read), console


def test_input_forms() -> None:
    game = Game(2, seed=1)
    view = game.view(0)
    assert parse_input("r3", view).action == Action.reveal(3)
    assert parse_input("reveal 3", view).action == Action.reveal(3)
    assert parse_input(" 7 ", view).action == Action.reveal(7)  # a bare number opens a card
    assert parse_input("HELP", view).command == "help"
    assert parse_input("q", view).command == "quit"
    for bad in ("", "d", "swap 3", "r12", "r-1", "hello world again"):
        error = parse_input(bad, view).error
        assert error is not None and "legal now: reveal 0 1 2" in error, bad
    for pos in (0, 1, 2, 3):
        game.apply(Action.reveal(pos))
    view = game.view(game.seat)
    assert view.decision is DecisionKind.DRAW_OR_TAKE
    assert parse_input("d", view).action == Action.draw()
    assert parse_input("t", view).action == Action.take()
    assert "legal now: draw; take" in (parse_input("s5", view).error or "")
    game.apply(Action.draw())
    view = game.view(game.seat)
    assert parse_input("s5", view).action == Action.swap(5)
    assert parse_input("swap5", view).action == Action.swap(5)
    assert "say s5" in (parse_input("5", view).error or "")  # swap or reveal? it asks
    revealed = view.my_grid.revealed_positions()[0]
    assert "already face up" in (parse_input(f"r{revealed}", view).error or "")


def test_human_bot_plays_a_game_on_the_engine() -> None:
    """Typed lines only (with wrong ones), against greedy, to the end of a short game."""
    game = Game(2, Rules(end_score=1), seed=11, players=["you", "greedy"])
    other = make_builtin("greedy")
    lines: list[str] = []
    human, console = scripted(lines)
    while not game.over:
        seat = game.seat
        view = game.view(seat)
        for event in game.drain_events():
            human.on_event(event)
        if seat == 1:
            game.apply(other.decide(view))
            continue
        hidden = view.my_grid.hidden_positions()
        if view.decision is DecisionKind.DRAW_OR_TAKE:
            lines += ["flip", "d"]
        else:
            lines += ["r99", f"r{hidden[0]}"]
        game.apply(human.decide(view))
    text = console.export_text()
    assert "unknown action 'flip'" in text
    assert "reveal needs a position 0-11" in text
    assert "you hold:" in text


def test_end_of_input_in_decide_raises_quit() -> None:
    human, _ = scripted([])
    with pytest.raises(QuitGame):
        human.decide(Game(2, seed=1).view(0))
    assert human.quit.is_set()


def test_the_end_of_each_round_shows_every_final_grid() -> None:
    """The grids shown at a round's end are complete (nothing hidden) and add up to each seat's card total."""
    game = Game(2, Rules(end_score=1), seed=11, players=["you", "greedy"])
    other = make_builtin("greedy")
    lines: list[str] = []
    human, console = scripted(lines)
    shown: list[tuple[list[Any], tuple[int, ...]]] = []

    def on_event(event: Event) -> None:
        if event.kind is EventKind.ROUND_END:
            shown.append((list(human._grids or []), event.raw))
        original(event)

    original, human.on_event = human.on_event, on_event  # type: ignore[method-assign]
    while not game.over:
        seat = game.seat
        view = game.view(seat)
        for event in game.drain_events():
            human.on_event(event)
        if seat == 1:
            game.apply(other.decide(view))
            continue
        hidden = view.my_grid.hidden_positions()
        lines.append("d" if view.decision is DecisionKind.DRAW_OR_TAKE else f"r{hidden[0]}")
        game.apply(human.decide(view))
    for event in game.drain_events():
        human.on_event(event)
    text = console.export_text()
    assert shown and text.count("Final grids:") == len(shown)
    for grids, raw in shown:
        assert len(grids) == 2
        for grid, total in zip(grids, raw):
            assert not grid.hidden_positions()
            assert grid.revealed_sum() == total


def test_play_shows_the_final_grids_and_saves_the_game_record(tmp_path: Path) -> None:
    driver = Driver("greedy", "--seed", "7", "--option", "end_score=1", "--records", str(tmp_path))
    for line in scripted_answers(driver):
        driver.answer(line)
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\nstdout:\n{out[-3000:]}\nstderr:\n{err}"
    assert "Final grids:" in out
    record = tmp_path / "game-00001.json"
    assert "A 2-player game: you (seat 0) against greedy" in out
    assert f"skyjo-ref replay {record}" in out.splitlines()
    assert check_file(record).over


def test_ctrl_c_leaves_the_game_with_exit_130() -> None:
    driver = Driver("greedy", "--seed", "5")
    assert driver.next_prompt() is not None
    driver.proc.send_signal(signal.SIGINT)
    code, out, err = driver.finish()
    assert code == 130, f"exit {code}\n{out[-2000:]}\n{err}"
    assert "interrupted after 0 finished game(s)" in err and "Traceback" not in out + err


def test_a_failing_opponent_shows_its_first_failure_and_its_log(tmp_path: Path) -> None:
    bot = tmp_path / "raiser.py"
    bot.write_text(
        "from skyjo_bot import Bot\n\n\nclass Raiser(Bot):\n    def decide(self, view):\n"
        "        raise ValueError('boom in play')\n",
        encoding="utf-8",
    )
    driver = Driver(str(bot), "--seed", "7", "--option", "end_score=1", "--logs", str(tmp_path / "logs"))
    for line in scripted_answers(driver):
        driver.answer(line)
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\nstdout:\n{out[-3000:]}\nstderr:\n{err}"
    message = " ".join(err.split())
    assert "raiser: first failure in game 1, round 1" in message
    assert f"ValueError: boom in play (at {bot}:6 in decide)" in message
    assert f"all of its output: {tmp_path / 'logs' / 'raiser.log'}" in message


def test_play_against_a_python_bot_in_process(tmp_path: Path) -> None:
    """--in-process: the bot file plays inside the referee's process (no bot process, no log file)."""
    minimal = os.path.join(os.path.dirname(__file__), "..", "examples", "python", "minimal_bot.py")
    driver = Driver(minimal, "--in-process", "--seed", "4", "-o", "end_score=1", "--records", str(tmp_path))
    for line in scripted_answers(driver):
        driver.answer(line)
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\nstdout:\n{out[-3000:]}\nstderr:\n{err}"
    assert "Game over" in out and "minimal_bot (seat 1)" in out
    record = json.loads(next(tmp_path.glob("game-*.json")).read_text())
    assert {"name": "minimal_bot", "version": "in-process"} in record["meta"]["bots"]
    assert not list(tmp_path.glob("*.log"))


def test_a_client_that_cannot_join_is_reported_as_soon_as_it_gives_up() -> None:
    """The wait for the person's Welcome ends with the client's task: its reason, not the 30 s bound."""
    import asyncio

    from skyjo_bot import BotClient
    from skyjo_ref.cli.play_session import PlayError, _wait_welcome

    async def main() -> None:
        client = BotClient(make_builtin("greedy"), "127.0.0.1:1", "t", give_up_after=0.2)  # nothing listens there
        task = asyncio.create_task(client.run())
        with pytest.raises(PlayError, match=r"could not join the referee: no session with the referee at 127\.0\.0\.1"):
            await _wait_welcome(client, task)
        assert not client.welcomed.is_set()

    asyncio.run(asyncio.wait_for(main(), 25))  # a failure detector, under the 30 s bound it must not reach
