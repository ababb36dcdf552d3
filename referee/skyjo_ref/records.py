"""Game records in the ``skyjo-game/1`` format (see GAME_RECORD.md): write, read, replay.

A record holds one whole game: every deck and reshuffle and every action, so
it replays exactly without a random number generator. :func:`replay` runs a
record through the rules engine and refuses it, with the place (``round 0,
action 9: ``) and the reason, if any action is illegal, any deal is wrong or
any stored result differs from the replayed one.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from skyjo_bot.types import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Action,
    IllegalActionError,
    InvalidActionError,
    Rules,
    RulesError,
    full_deck,
)

from skyjo_ref.rules.engine import Dealer, DealError, FixedDealer, Game, check_deck

FORMAT: Final = "skyjo-game/1"
AUTO_REASONS: Final = ("timeout", "illegal", "disconnected", "forfeit")


class RecordError(ValueError):
    """A record that cannot be right; the message starts with where (``round 2, action 7: ``)."""


def game_to_record(game: Game, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``skyjo-game/1`` record of a finished game (or of the rounds played so far)."""
    rounds = []
    for log in game.rounds:
        actions = []
        for logged in log.actions:
            entry: dict[str, Any] = {"seat": logged.seat, **logged.action.to_dict()}
            if logged.auto is not None:
                entry["auto"] = logged.auto
            actions.append(entry)
        round_entry: dict[str, Any] = {
            "deck": list(log.deck),
            "reshuffles": [list(pile) for pile in log.reshuffles],
            "actions": actions,
        }
        if log.scores is not None:
            round_entry["result"] = {"finisher": log.finisher, "raw": list(log.raw or []), "scores": list(log.scores)}
        rounds.append(round_entry)
    record: dict[str, Any] = {
        "format": FORMAT,
        "rules": game.rules.to_dict() or {"preset": "official"},
        "players": list(game.players),
        "rounds": rounds,
    }
    if game.over:
        assert game.ranks is not None and game.winners is not None
        result: dict[str, Any] = {
            "totals": list(game.totals),
            "ranks": list(game.ranks),
            "winners": list(game.winners),
        }
        if game.forfeits:
            result["forfeits"] = sorted(game.forfeits)
        record["result"] = result
    if meta:
        record["meta"] = dict(meta)
    return record


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def dumps(record: Mapping[str, Any]) -> str:
    """Compact JSON text with one line per round header and per action, so records diff well.

    Key order is kept; parsing the text gives back an equal record.
    """
    lines = []
    for key, value in record.items():
        if key == "rounds" and isinstance(value, list) and all(isinstance(r, dict) for r in value):
            rounds = []
            for entry in value:
                fields = []
                for k, v in entry.items():
                    if k == "actions" and isinstance(v, list):
                        body = ",\n".join(_compact(a) for a in v)
                        fields.append(f'"actions":[\n{body}]' if v else '"actions":[]')
                    else:
                        fields.append(f"{_compact(k)}:{_compact(v)}")
                rounds.append("{" + ",".join(fields) + "}")
            lines.append('"rounds":[\n' + ",\n".join(rounds) + "]")
        else:
            lines.append(f"{_compact(key)}:{_compact(value)}")
    return "{" + ",\n".join(lines) + "}"


def round_starters(record: Mapping[str, Any]) -> list[int | None]:
    """Per round, the seat that played its first turn (None for a round without a turn).

    Who starts a round follows from the revealed cards (round 1) and the rules'
    ``next_round_starter``, not from the order around the table; the first
    ``draw`` or ``take`` after the opening reveals says who it was.
    """
    return [
        next((int(a["seat"]) for a in rnd["actions"] if a.get("act") in ("draw", "take")), None)
        for rnd in record["rounds"]
    ]


def save(record: Mapping[str, Any], path: str | Path) -> None:
    """Write ``record`` whole or not at all: a Ctrl-C or SIGTERM mid-write leaves no half record behind."""
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(dumps(record) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def load(path: str | Path) -> dict[str, Any]:
    """Read a record file; an unreadable file, malformed JSON or a non-object is a :class:`RecordError`.

    Its message starts with the path, since it is not the record's fault.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not UTF-8 text: expected a skyjo-game/1 JSON record") from None
    try:
        return loads(text)
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None


def loads(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # an integer of 4300+ digits, arrays nested thousands deep
        raise RecordError(f"not a JSON record this reader accepts: {exc}") from None
    if not isinstance(data, dict):
        raise RecordError(f"expected a JSON object with format {FORMAT!r}, got {type(data).__name__}")
    return data


class _ReplayDealer(Dealer):
    """The record's decks; past the last one it deals a placeholder and notes that it did."""

    def __init__(self, decks: list[list[int]], reshuffles: list[list[list[int]]]) -> None:
        self.fixed = FixedDealer(decks, reshuffles)
        self.count = len(decks)
        self.ran_out = False

    def deck(self, round_index: int) -> list[int]:
        if round_index >= self.count:
            self.ran_out = True
            return full_deck()
        return self.fixed.deck(round_index)

    def reshuffle(self, round_index: int, count: int, discards: list[int]) -> list[int]:
        # the caller prefixes "round k, action i: ", so the messages say only what is wrong
        given = self.fixed.reshuffles[round_index] if round_index < len(self.fixed.reshuffles) else []
        if count >= len(given):
            raise DealError(f"the draw pile is empty but the round lists no reshuffle {count} to rebuild it")
        pile = list(given[count])
        if Counter(pile) != Counter(discards):
            raise DealError(
                f"reshuffle {count} ({len(pile)} cards) does not hold the {len(discards)} discards "
                f"below the top card (the same multiset, in any order)"
            )
        return pile


def _expect_list(value: Any, where: str, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{where}{what} must be a list, got {type(value).__name__}")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def replay(record: Mapping[str, Any]) -> Game:
    """Replay a record through the engine and check it; return the finished game.

    Raises :class:`RecordError` with the place and the reason for the first
    thing that is wrong.
    """
    rules, players, rounds = _header(record)
    decks, reshuffles = _decks(rounds)
    dealer = _ReplayDealer(decks, reshuffles)
    try:
        game = Game(len(players), rules, dealer=dealer, players=players)
    except DealError as exc:
        raise RecordError(f"round 0: {exc}") from None
    for k, entry in enumerate(rounds):
        _replay_round(game, k, entry, len(reshuffles[k]))
    if not game.over:
        raise RecordError(
            f"the record ends after round {len(rounds) - 1}, but the game goes on "
            f"(totals {game.totals}; end_score {rules.end_score})"
        )
    _check_result(game, record.get("result"), len(players))
    return game


def _header(record: Mapping[str, Any]) -> tuple[Rules, list[Any], list[Any]]:
    """The record's format, rules, players and rounds, checked."""
    if record.get("format") != FORMAT:
        raise RecordError(f"format is {record.get('format')!r}, expected {FORMAT!r}")
    raw_rules = record.get("rules")
    if raw_rules is not None and not isinstance(raw_rules, dict):
        raise RecordError(f'rules: expected an object like {{"preset": "official"}}, got {type(raw_rules).__name__}')
    try:
        rules = Rules.from_dict(raw_rules or {})
    except (RulesError, TypeError, AttributeError) as exc:
        raise RecordError(f"rules: {exc}") from None
    players = _expect_list(record.get("players"), "", "players")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise RecordError(f"players: Skyjo is played by 2 to 8 players, the record has {len(players)}")
    if not all(isinstance(p, str) for p in players):
        raise RecordError("players: expected a list of display names (strings)")
    rounds = _expect_list(record.get("rounds"), "", "rounds")
    if not rounds:
        raise RecordError("rounds: a record holds at least one round")
    return rules, players, rounds


def _decks(rounds: list[Any]) -> tuple[list[list[int]], list[list[list[int]]]]:
    """Each round's deck and reshuffled piles, checked (a deck holds the right cards)."""
    decks: list[list[int]] = []
    reshuffles: list[list[list[int]]] = []
    for k, entry in enumerate(rounds):
        where = f"round {k}: "
        if not isinstance(entry, dict):
            raise RecordError(f"{where}expected an object with deck, reshuffles, actions, result")
        deck = _expect_list(entry.get("deck"), where, "deck")
        if not all(_is_int(v) for v in deck):
            raise RecordError(f"{where}deck must hold integer card values")
        try:
            check_deck(deck)
        except DealError as exc:
            raise RecordError(f"{where}{exc}") from None
        piles = _expect_list(entry.get("reshuffles", []), where, "reshuffles")
        for j, pile in enumerate(piles):
            if not isinstance(pile, list) or not all(_is_int(v) for v in pile):
                raise RecordError(f"{where}reshuffle {j} must be a list of card values")
        _expect_list(entry.get("actions"), where, "actions")
        decks.append(deck)
        reshuffles.append(piles)
    return decks, reshuffles


def _replay_round(game: Game, k: int, entry: Mapping[str, Any], reshuffles: int) -> None:
    """Apply round ``k``'s actions (each checked: its seat is due, it is legal) and check the round's result."""
    if game.over or game.round_index != k:
        raise RecordError(f"round {k}: the game was already over after round {k - 1}")
    for i, raw_action in enumerate(entry["actions"]):
        where = f"round {k}, action {i}: "
        if game.over or game.round_index != k:
            raise RecordError(f"{where}the round was already over")
        if not isinstance(raw_action, dict):
            raise RecordError(f'{where}expected an object like {{"seat": 0, "act": "draw"}}')
        try:
            action = Action.from_dict(raw_action)
        except InvalidActionError as exc:
            raise RecordError(f"{where}{exc}") from None
        seat = raw_action.get("seat")
        if seat != game.current_seat or not _is_int(seat):
            raise RecordError(
                f"{where}seat {seat!r} acted, but seat {game.current_seat} is due ({game.decision.value})"
            )
        auto = raw_action.get("auto")
        if auto is not None and auto not in AUTO_REASONS:
            raise RecordError(f"{where}auto is {auto!r}, expected one of {', '.join(AUTO_REASONS)}")
        try:
            game.apply(action, auto=auto)
        except (IllegalActionError, DealError) as exc:
            raise RecordError(f"{where}{exc}") from None
    if not game.over and game.round_index == k:
        raise RecordError(
            f"round {k}: the actions end before the round does "
            f"(seat {game.current_seat} still has to {game.decision.value})"
        )
    log = game.rounds[k]
    if len(log.reshuffles) != reshuffles:
        raise RecordError(
            f"round {k}: reshuffle {len(log.reshuffles)} is never used "
            f"(the draw pile ran out {len(log.reshuffles)} times, {reshuffles} reshuffles are listed)"
        )
    _check_round_result(k, entry.get("result"), log.finisher, log.raw, log.scores)


def _check_result(game: Game, result: Any, players: int) -> None:
    """The stored result (forfeits applied) equals the replayed game's."""
    if not isinstance(result, dict):
        raise RecordError("result: expected an object with totals, ranks and winners")
    forfeits = result.get("forfeits", [])
    if not isinstance(forfeits, list) or not all(_is_int(s) and 0 <= s < players for s in forfeits):
        raise RecordError(f"result: forfeits must list seats 0-{players - 1}, got {forfeits!r}")
    for seat in forfeits:
        game.mark_forfeit(seat)
    replayed = {"totals": game.totals, "ranks": game.ranks, "winners": game.winners}
    for key, value in replayed.items():
        if not _same(result.get(key), value):
            raise RecordError(f"result: stored {key} {result.get(key)!r} differ from the replayed {value!r}")


def _same(stored: Any, replayed: Any) -> bool:
    """Equal as JSON values: ``true`` is not ``1`` and ``1.0`` is not ``1``, order counts."""
    return json.dumps(stored) == json.dumps(replayed)


def _check_round_result(
    k: int,
    stored: Any,
    finisher: int | None,
    raw: Sequence[int] | None,
    scores: Sequence[int] | None,
) -> None:
    if not isinstance(stored, dict):
        raise RecordError(f"round {k}: result must be an object with finisher, raw and scores")
    replayed = {"finisher": finisher, "raw": list(raw or []), "scores": list(scores or [])}
    for key, value in replayed.items():
        if not _same(stored.get(key), value):
            raise RecordError(f"round {k}: stored {key} {stored.get(key)!r} differs from the replayed {value!r}")


def check_file(path: str | Path) -> Game:
    """Load and replay one record file (a :class:`RecordError` says what is wrong)."""
    return replay(load(path))
