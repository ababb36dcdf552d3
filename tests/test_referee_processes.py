"""Real bot processes on a real referee: SDK bots play a match; a crashing bot is restarted mid-game."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from referee_harness import RELAXED, play, start_referee
from skyjo_ref.players import BotSpecError, ManagedBot, command_spec, parse_bot_spec
from skyjo_ref.records import replay
from skyjo_ref.server import MatchSpec, SeatSpec

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "examples" / "python" / "minimal_bot.py"

CRASHER = textwrap.dedent(
    """
    import os
    from pathlib import Path
    from skyjo_bot import Action, Bot, View

    MARK = Path(__file__).with_suffix(".crashed")

    class Crasher(Bot):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def decide(self, view: View) -> Action:
            self.calls += 1
            if self.calls == 8 and not MARK.exists():
                MARK.write_text("crashed once")
                os._exit(3)  # a hard crash, mid-decision
            kinds = [a.kind.value for a in view.legal_actions]
            for wanted in ("reveal", "draw"):
                if wanted in kinds:
                    return view.legal_actions[kinds.index(wanted)]
            return view.legal_actions[0]
    """
)


def test_two_sdk_bots_play_a_full_match_as_subprocesses() -> None:
    async def scenario() -> list[dict[str, Any]]:
        server = await start_referee()
        spec_a = parse_bot_spec(str(MINIMAL))
        spec_b = parse_bot_spec(f"{MINIMAL}:MinimalBot")
        ta, tb = server.issue_token("mini-a"), server.issue_token("mini-b")
        bots = [ManagedBot(spec_a, server.address, ta), ManagedBot(spec_b, server.address, tb)]
        try:
            for b in bots:
                await b.start()
            spec = MatchSpec(
                seats=(SeatSpec.of_token(ta, "mini-a"), SeatSpec.of_token(tb, "mini-b")),
                time_control=RELAXED,
                games=2,
                seed="sdk",
                rotate_seats=True,
            )
            records, end = await play(server, spec)
            assert end.error == ""
            assert all(not b.faults for b in bots)
            return records
        finally:
            for b in bots:
                await b.stop()
            await server.stop()

    records = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert len(records) == 2
    for record in records:
        replay(record)
        assert record["meta"]["strikes"] == [] and "forfeits" not in record["result"]
        assert [b["name"] for b in record["meta"]["bots"]] == record["players"]
        assert all(t["decisions"] > 10 for t in record["meta"]["timings"])


def test_a_crashed_bot_process_is_restarted_and_finishes_its_game(tmp_path: Path) -> None:
    bot_file = tmp_path / "crasher.py"
    bot_file.write_text(CRASHER)

    async def scenario() -> tuple[dict[str, Any], ManagedBot]:
        server = await start_referee()
        token = server.issue_token("crasher")
        bot = ManagedBot(parse_bot_spec(str(bot_file)), server.address, token)
        try:
            await bot.start()
            spec = MatchSpec(
                seats=(SeatSpec.of_token(token, "crasher"), SeatSpec.of_builtin("greedy")), time_control=RELAXED
            )
            records, end = await play(server, spec)
            assert end.error == ""
            return records[0], bot
        finally:
            await bot.stop()
            await server.stop()

    record, bot = asyncio.run(asyncio.wait_for(scenario(), 120))
    replay(record)
    assert (tmp_path / "crasher.crashed").exists()
    assert len(bot.faults) == 1 and bot.faults[0].returncode == 3 and bot.restarts == 1
    assert "exited with code 3" in bot.faults[0].describe()
    assert record["meta"]["strikes"] == [] and "forfeits" not in record["result"]


async def said(bot: ManagedBot, text: str) -> None:
    """Until the process has printed ``text`` (polled; 60 s is a failure detector, for a loaded machine)."""
    for _ in range(3000):
        if text in bot.output():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{bot.spec.name} never printed {text!r}; its output: {bot.output()}")


def test_stop_kills_a_bot_that_ignores_sigterm(tmp_path: Path) -> None:
    stubborn = command_spec(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('up', flush=True); time.sleep(60)",
        ],
        name="stubborn",
    )

    async def scenario() -> ManagedBot:
        bot = ManagedBot(stubborn, "127.0.0.1:1", "t", log_path=tmp_path / "stubborn.log")
        await bot.start()
        await said(bot, "up")  # it has ignored SIGTERM
        await bot.stop(timeout_s=0.5)
        return bot

    bot = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert not bot.running and bot.faults == []
    assert "up" in (tmp_path / "stubborn.log").read_text()


def test_each_fault_wakes_its_waiter_once_it_is_recorded() -> None:
    """``wait_fault`` returns once the fault is in ``faults``: no pause to let the record catch up."""
    quitter = command_spec([sys.executable, "-c", "import sys; print('bye', flush=True); sys.exit(7)"], name="quitter")

    async def scenario() -> tuple[list[Any], ManagedBot]:
        bot = ManagedBot(quitter, "127.0.0.1:1", "t", max_restarts=1)
        await bot.start()
        try:
            await asyncio.wait_for(bot.wait_fault(0), 60)
            first = list(bot.faults)
            await asyncio.wait_for(bot.wait_fault(1), 60)  # restarted once, died again: not restarted again
            assert bot.exited.is_set() and not bot.running
        finally:
            await bot.stop()
        return first, bot

    first, bot = asyncio.run(scenario())
    assert len(first) == 1 and first[0].returncode == 7 and "bye" in first[0].output
    assert [f.returncode for f in bot.faults] == [7, 7] and bot.restarts == 1


def test_bot_specs_are_read_or_refused_clearly(tmp_path: Path) -> None:
    assert parse_bot_spec("greedy").kind == "builtin"
    remote = parse_bot_spec("remote:tomas")
    assert remote.kind == "remote" and remote.name == "tomas"
    file_spec = parse_bot_spec(str(MINIMAL) + ":MinimalBot")
    assert file_spec.kind == "python" and file_spec.name == "MinimalBot"
    assert file_spec.process_command()[1:4] == ("-m", "skyjo_bot", "run")
    assert parse_bot_spec("skyjo_ref.bots.greedy:GreedyBot").python == "skyjo_ref.bots.greedy:GreedyBot"
    cmd = parse_bot_spec(f"cmd:{sys.executable} -u bot.py --fast")
    assert cmd.kind == "command" and cmd.command[1:] == ("-u", "bot.py", "--fast")
    for bad, message in (
        ("", "empty bot spec"),
        ("grumpy", "unknown bot 'grumpy'"),
        ("nothere.py", "no such file 'nothere.py'"),
        ("no_such_module_xyz:Bot", "no module 'no_such_module_xyz'"),
        ("cmd:", "empty command"),
        ("cmd:no-such-program-xyz --x", "not found on PATH"),
        ("remote:", "names no bot"),
    ):
        with pytest.raises(BotSpecError, match=message):
            parse_bot_spec(bad, base=tmp_path)


def test_a_cancel_that_lands_as_stop_finishes_waiting_is_not_swallowed() -> None:
    """stop() is cancelled even when the cancel comes in the loop turn its wait for the watcher ends.

    Python 3.11's ``asyncio.wait_for`` returns normally then (the cancel is lost, and a cancelled
    tournament would go on); ``asyncio.timeout`` delivers it. The watcher is a stand-in the test
    controls, so the order of the loop's callbacks is fixed: no timing involved.
    """
    bot = ManagedBot(command_spec([sys.executable, "-c", "pass"], name="idle"), "127.0.0.1:1", "t")

    async def scenario() -> asyncio.Task[None]:
        waiting, release = asyncio.Event(), asyncio.Event()

        async def watcher() -> None:  # ends as the real one does after a stop: exited set, then return
            waiting.set()
            await release.wait()
            bot.exited.set()

        bot._watcher = asyncio.create_task(watcher())
        await waiting.wait()
        stopper = asyncio.create_task(bot.stop(timeout_s=60))  # runs before the watcher wakes: it waits on it
        release.set()
        await bot.exited.wait()  # this turn the watcher is done and stop() is about to wake
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)
        return stopper

    stopper = asyncio.run(scenario())
    assert stopper.cancelled(), "the cancel was swallowed: stop() returned normally"


def test_stop_ends_the_pause_before_a_restart_at_once() -> None:
    """A crashed bot waits before its restart; stop() does not wait that pause out."""

    class Patient(ManagedBot):
        RESTART_BACKOFF_S = (3600.0, 3600.0)  # an hour: stop() can only end it by waking the watcher

    quitter = command_spec([sys.executable, "-c", "import sys; sys.exit(7)"], name="quitter")

    async def scenario() -> ManagedBot:
        bot = Patient(quitter, "127.0.0.1:1", "t", max_restarts=3)
        await bot.start()
        await bot.wait_fault(0)  # crashed: the watcher is now in its pause before the restart
        await bot.stop(timeout_s=60)
        return bot

    bot = asyncio.run(asyncio.wait_for(scenario(), 60))  # a failure detector: the pause is an hour
    assert bot.restarts == 0 and not bot.running and len(bot.faults) == 1


def test_a_crash_that_stop_overtakes_is_still_a_fault() -> None:
    """A process that dies on its own just before stop(), while the event loop has not yet heard of its exit
    (its ``returncode`` is still None), crashed: stop() did not end it. Seen at the end of a tournament whose
    last game's bot crashed as the run ended: the fault was neither stored nor printed."""
    quitter = command_spec([sys.executable, "-c", "import sys; sys.exit(3)"], name="quitter")

    async def scenario() -> ManagedBot:
        bot = ManagedBot(quitter, "127.0.0.1:1", "t", max_restarts=3)
        await bot.start()
        assert bot.pid is not None
        with contextlib.suppress(ChildProcessError):  # already reaped by asyncio's child watcher thread
            os.waitid(os.P_PID, bot.pid, os.WEXITED | os.WNOWAIT)  # blocks until it has exited; reaps nothing
        # no await since start(): the loop has not run, so the exit is not yet known to it
        assert bot._proc is not None and bot._proc.returncode is None
        await bot.stop(timeout_s=60)
        return bot

    bot = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert [f.returncode for f in bot.faults] == [3] and bot.restarts == 0 and not bot.running


def test_an_exit_code_that_the_stop_did_not_cause_is_a_fault(tmp_path: Path) -> None:
    """A process still running when stop() signals it, that then ends with a code of its own (here its SIGTERM
    handler exits 2; in a run, the sandbox's supervisor of a bot that had just crashed), did not just stop:
    a fault. Seen under load: a bot that crashed in a match's one game was not reported."""
    odd = command_spec(
        [
            sys.executable,
            "-c",
            "import signal, sys; signal.signal(signal.SIGTERM, lambda *_: sys.exit(2)); "
            "print('up', flush=True); signal.pause()",
        ],
        name="odd",
    )

    async def scenario() -> ManagedBot:
        bot = ManagedBot(odd, "127.0.0.1:1", "t")
        await bot.start()
        await said(bot, "up")  # its handler is in place
        assert bot.running
        await bot.stop(timeout_s=60)
        return bot

    bot = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert [f.returncode for f in bot.faults] == [2] and bot.restarts == 0 and not bot.running


def test_a_bot_whose_watcher_is_cut_short_leaves_no_transport_to_the_garbage_collector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every subprocess transport is closed on the run's loop, whatever order processes end in.

    The bot ignores SIGTERM and leaves a child in a session of its own that holds its output pipe open:
    stop()'s wait for the watcher (0.3 s) ends while the watcher still waits for the pipe (2 s), as on a
    loaded machine. Before, that transport was closed by the garbage collector after ``asyncio.run`` had
    closed the loop: "Exception ignored in: BaseSubprocessTransport.__del__ ... Event loop is closed" on
    the user's terminal (seen in tests/test_sandbox.py under load, and by `tournament` users).
    """
    leaver = command_spec(
        [
            sys.executable,
            "-c",
            "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True); "
            "print('child', child.pid, flush=True); print('up', flush=True); time.sleep(60)",
        ],
        name="leaver",
    )
    unraisable: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(f"{u.err_msg}: {u.exc_value!r}"))

    async def scenario() -> int:
        bot = ManagedBot(leaver, "127.0.0.1:1", "t")
        await bot.start()
        await said(bot, "up")
        child = int(bot.output().split("child ")[1].split()[0])
        await bot.stop(timeout_s=0.3)
        assert not bot.running
        return child

    child = asyncio.run(asyncio.wait_for(scenario(), 60))
    os.kill(child, 9)  # the child that left the bot's process group (no cgroup here to take it)
    gc.collect()  # what asyncio left behind is collected now, after its loop has closed
    assert unraisable == []
