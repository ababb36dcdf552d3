"""Run a gate: count what the store holds, then play deal blocks on the referee until the test decides.

The games are played by the tournament's machinery (the referee backend and
the execution layer, :mod:`skyjo_ref.execution.play`) into a tournament store,
so a gate stopped any way (Ctrl-C, kill -9, a cancelled CI job) resumes from
its store and reaches the verdict an uninterrupted run would.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skyjo_ref.checkbot.before import check_before_play
from skyjo_ref.execution.play import BackendFactory, play_games
from skyjo_ref.gate.spec import GateSpec
from skyjo_ref.gate.tracker import GateTracker
from skyjo_ref.tournament.runner import Observer, QuietObserver
from skyjo_ref.tournament.store import Store, StoredGame


@dataclass(slots=True)
class GateRun:
    """What a run did."""

    tracker: GateTracker
    already: int  # games stored before this run (counted or not)
    played: int  # games finished in this run
    seconds: float


def open_tracker(spec: GateSpec, store: Store) -> tuple[GateTracker, int]:
    """A tracker fed with every game the store holds (in key order; the tracker sorts deals itself)."""
    tracker = GateTracker(spec)
    stored = store.games()
    for game in sorted(stored, key=lambda g: (g.id.deal, g.id.rotation)):
        if tracker.done:
            break
        tracker.add(game, store.record(game.ref) if spec.luck else None)
    return tracker, len(stored)


async def run_gate(
    spec: GateSpec,
    store: Store,
    on_update: Callable[[GateTracker, int], None] | None = None,
    observer: Observer | None = None,
    backend: BackendFactory | None = None,
) -> GateRun:
    """Play until a verdict (or ``max_games``); ``store.set_info("gate", ...)`` after every evaluation.

    ``on_update(tracker, played)`` is called after every finished game (and once before the first).
    """
    started = time.monotonic()
    tracker, already = open_tracker(spec, store)
    store.set_info("gate", tracker.info())
    run = GateRun(tracker, already, 0, 0.0)
    if on_update is not None:
        on_update(tracker, 0)
    if tracker.done:
        run.seconds = time.monotonic() - started
        return run
    done_keys = store.finished_keys()
    todo = [g for g in spec.games() if g.key not in done_keys and g.deal >= tracker.next_deal]
    if spec.check and todo:  # a bot that breaks the protocol fails the gate in seconds, naming the case
        rerun = lambda bot: f"skyjo-ref check-bot {shlex.quote(bot.text or bot.name)}"  # noqa: E731
        bots = (spec.candidate, spec.baseline, *spec.field)
        for note in await check_before_play(bots, spec.output / "check-bot", rerun):
            if observer is not None:
                observer.note(note)
    if backend is None:
        from skyjo_ref.execution.backend import referee_backend

        backend = referee_backend
    config = spec.tournament_config()

    def on_game(stored: StoredGame, record: dict[str, Any]) -> None:
        run.played += 1
        if tracker.add(stored, record):
            store.set_info("gate", tracker.info())
        if on_update is not None:
            on_update(tracker, run.played)

    async with backend(config.room(), store, observer or QuietObserver()) as referee:
        await referee.prepare(todo[: 2 * spec.concurrency], spec.concurrency)
        await play_games(
            todo,
            referee,
            store,
            seats_of=lambda game: [(name, config.bot(name)) for name in game.seats],
            seed_of=spec.seed_of,
            concurrency=spec.concurrency,
            on_game=on_game,
            stop=lambda: tracker.done,
        )
    store.set_info("gate", tracker.info())
    run.seconds = time.monotonic() - started
    return run
