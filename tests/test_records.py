"""``skyjo-game/1`` records: round trip, and every refusal of GAME_RECORD.md with its exact location.

Locations are 0-based: ``round 0, action 9: `` for an action, ``round 2: ``
where no action is to blame, nothing for the whole record.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from deals import G_HIGH, G_LOW, act, make_deck, make_game, open_all, play_round
from hypothesis import given, settings
from hypothesis import strategies as st
from skyjo_bot.types import Action, DecisionKind, Rules
from skyjo_ref import records
from skyjo_ref.bots import make_builtin
from skyjo_ref.records import RecordError
from skyjo_ref.rules.engine import FixedDealer, Game

DATA = Path(__file__).parent / "data"


def played(seed: str = "records", players: int = 2, rules: Rules | None = None) -> Game:
    game = Game(players, rules, seed=seed, players=[f"bot{i}" for i in range(players)])
    bots = [make_builtin("greedy" if i % 2 == 0 else "random", i) for i in range(players)]
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        game.apply(bots[seat].decide(game.view(seat)))
    return game


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    game = played()
    assert len(game.rounds) >= 2
    return records.game_to_record(game, meta={"seed": "records"})


def refused(record: dict[str, Any]) -> str:
    with pytest.raises(RecordError) as info:
        records.replay(record)
    return str(info.value)


def first_index(record: dict[str, Any], round_index: int, decision: DecisionKind, after: int = 0) -> int:
    """The index of the first action of a round, from ``after`` on, taken when ``decision`` was due."""
    game = Game(len(record["players"]), Rules.from_dict(record["rules"]), dealer=replay_dealer(record))
    for k, entry in enumerate(record["rounds"]):
        for i, raw in enumerate(entry["actions"]):
            if k == round_index and i >= after and game.decision is decision:
                return i
            game.apply(Action.from_dict(raw))
    raise AssertionError("no such action")


def replay_dealer(record: dict[str, Any]) -> FixedDealer:
    return FixedDealer([r["deck"] for r in record["rounds"]], [r["reshuffles"] for r in record["rounds"]])


# ---------------------------------------------------------------- round trip


def test_round_trip_through_text_and_file(base: dict[str, Any], tmp_path: Path) -> None:
    text = records.dumps(base)
    assert records.loads(text) == base
    assert text.count("\n") >= sum(len(r["actions"]) for r in base["rounds"])  # one line per action
    path = tmp_path / "game.json"
    records.save(base, path)
    assert records.load(path) == base
    game = records.check_file(path)
    assert game.totals == base["result"]["totals"]
    assert records.game_to_record(game, meta=base["meta"]) == base


def test_record_fields_follow_the_spec(base: dict[str, Any]) -> None:
    assert base["format"] == "skyjo-game/1"
    assert base["rules"] == {"preset": "official"}
    assert base["players"] == ["bot0", "bot1"]
    for entry in base["rounds"]:
        assert set(entry) == {"deck", "reshuffles", "actions", "result"}
        assert len(entry["deck"]) == 150
        assert set(entry["result"]) == {"finisher", "raw", "scores"}
        opening = entry["actions"][:4]
        assert [(a["seat"], a["act"]) for a in opening] == [(0, "reveal"), (0, "reveal"), (1, "reveal"), (1, "reveal")]
        for action in entry["actions"]:
            assert set(action) <= {"seat", "act", "pos", "auto"}
            assert ("pos" in action) == (action["act"] in ("reveal", "swap"))
    assert set(base["result"]) == {"totals", "ranks", "winners"}


def test_rules_written_compactly_and_read_back() -> None:
    rules = Rules.from_dict({"preset": "slovenian", "column_clear": False, "end_score": 60})
    game = played("rules", 3, rules)
    record = records.game_to_record(game)
    assert record["rules"] == {"preset": "slovenian", "column_clear": False, "end_score": 60}
    assert records.replay(record).rules == rules
    no_rules = copy.deepcopy(records.game_to_record(played("plain")))
    del no_rules["rules"]  # without rules, the base is official
    assert records.replay(no_rules).rules == Rules()


def test_auto_tags_and_forfeits_round_trip() -> None:
    game = Game(3, seed="auto", players=["a", "b", "c"])
    rng_bot = make_builtin("random", 3)
    while not game.over:
        seat = game.current_seat
        assert seat is not None
        auto = "timeout" if seat == 2 else None
        game.apply(rng_bot.decide(game.view(seat)), auto=auto)
    assert game.winners is not None
    gone = game.winners[0]
    game.mark_forfeit(gone)
    record = records.game_to_record(game)
    assert record["result"]["forfeits"] == [gone]
    assert {a.get("auto") for r in record["rounds"] for a in r["actions"] if a["seat"] == 2} == {"timeout"}
    replayed = records.replay(record)
    assert replayed.ranks == game.ranks and replayed.ranks is not None and replayed.ranks[gone] == 3
    assert records.game_to_record(replayed) == record
    wrong = copy.deepcopy(record)
    del wrong["result"]["forfeits"]
    assert refused(wrong).startswith("result: stored ranks")


def test_data_files() -> None:
    assert records.check_file(DATA / "greedy_random.json").winners == [0]
    with pytest.raises(RecordError, match=r"^round 0, action 9: seat 1 cannot take now"):
        records.check_file(DATA / "greedy_random_illegal_action.json")


# ------------------------------------------------------------------ refusals


def test_illegal_action(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    i = first_index(record, 0, DecisionKind.DRAW_OR_TAKE, after=9)
    seat = record["rounds"][0]["actions"][i]["seat"]
    record["rounds"][0]["actions"][i] = {"seat": seat, "act": "swap", "pos": 3}
    assert refused(record) == (
        f"round 0, action {i}: seat {seat} cannot swap 3 now (draw_or_take is due: expected draw or take)"
    )


def test_illegal_action_in_a_later_round(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    i = first_index(record, 1, DecisionKind.SWAP_AFTER_TAKE)
    action = record["rounds"][1]["actions"][i]
    action["act"], action["pos"] = "reveal", 0
    message = refused(record)
    assert message.startswith(f"round 1, action {i}: seat {action['seat']} cannot reveal 0 now")
    assert "a taken card must be swapped" in message


def test_action_that_does_not_parse(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    record["rounds"][0]["actions"][2] = {"seat": 1, "act": "reveal", "pos": 12}
    assert refused(record).startswith("round 0, action 2: reveal needs a position 0-11")
    record["rounds"][0]["actions"][2] = {"seat": 1, "act": "peek", "pos": 3}
    assert refused(record).startswith("round 0, action 2: unknown action 'peek'")
    record["rounds"][0]["actions"][2] = "reveal 3"
    assert refused(record).startswith("round 0, action 2: expected an object")


def test_wrong_seat(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    record["rounds"][0]["actions"][3]["seat"] = 0
    assert refused(record) == "round 0, action 3: seat 0 acted, but seat 1 is due (opening_reveal)"
    record = copy.deepcopy(base)
    record["rounds"][0]["actions"][0]["seat"] = True
    assert refused(record).startswith("round 0, action 0: seat True acted, but seat 0 is due")


def test_unknown_auto_reason(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    record["rounds"][0]["actions"][7]["auto"] = "lazy"
    assert refused(record).startswith("round 0, action 7: auto is 'lazy', expected one of timeout, illegal")


@pytest.mark.parametrize("k", [0, 1])
def test_deck_not_the_150_card_multiset(base: dict[str, Any], k: int) -> None:
    record = copy.deepcopy(base)
    deck = record["rounds"][k]["deck"]
    deck[deck.index(-2)] = 13
    assert refused(record).startswith(f"round {k}: deck has 4 cards of value -2, expected 5")
    record["rounds"][k]["deck"] = deck[:-1]
    assert refused(record) == f"round {k}: deck has 149 cards, expected 150"
    record["rounds"][k]["deck"] = [*deck[:-1], "5"]
    assert refused(record) == f"round {k}: deck must hold integer card values"
    del record["rounds"][k]["deck"]
    assert refused(record) == f"round {k}: deck must be a list, got NoneType"


def _reshuffled_record() -> dict[str, Any]:
    """A 2-player game (end_score 1: one round) whose draw pile runs out once."""
    game = make_game([make_deck([G_HIGH, G_LOW], discard=3)], 2, Rules(end_score=1), seed=5)
    open_all(game)
    while game.view(0).draw_pile_size:
        act(game, "draw", "swap 0")
    play_round(game)
    assert game.over and len(game.rounds[0].reshuffles) == 1
    return records.game_to_record(game)


def test_reshuffle_is_checked_and_used() -> None:
    record = _reshuffled_record()
    assert len(record["rounds"][0]["reshuffles"][0]) == 125
    assert records.replay(record).totals == record["result"]["totals"]
    draw_at = 4 + 2 * 125  # openings, then 125 turns of draw + swap: this draw finds the pile empty

    wrong = copy.deepcopy(record)
    pile = wrong["rounds"][0]["reshuffles"][0]
    pile[pile.index(12)] = -2 if pile.count(-2) < 5 else 11
    assert refused(wrong) == (
        f"round 0, action {draw_at}: reshuffle 0 (125 cards) does not hold the 125 discards below the top card "
        "(the same multiset, in any order)"
    )
    missing = copy.deepcopy(record)
    missing["rounds"][0]["reshuffles"] = []
    assert refused(missing) == (
        f"round 0, action {draw_at}: the draw pile is empty but the round lists no reshuffle 0 to rebuild it"
    )
    reordered = copy.deepcopy(record)
    reordered["rounds"][0]["reshuffles"][0].reverse()  # any order of the right multiset is a deal
    replayed = records.replay(reordered)  # (here the later draws are only discarded: same scores)
    assert replayed.rounds[0].reshuffles == reordered["rounds"][0]["reshuffles"]


def test_unused_reshuffle(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    record["rounds"][1]["reshuffles"] = [[1, 2, 3]]
    assert (
        refused(record) == "round 1: reshuffle 0 is never used (the draw pile ran out 0 times, 1 reshuffles are listed)"
    )
    extra = _reshuffled_record()
    extra["rounds"][0]["reshuffles"].append([5])
    assert refused(extra).startswith("round 0: reshuffle 1 is never used")


@pytest.mark.parametrize("key", ["finisher", "raw", "scores"])
def test_stored_round_result_differs(base: dict[str, Any], key: str) -> None:
    record = copy.deepcopy(base)
    result = record["rounds"][1]["result"]
    replayed = result[key]
    result[key] = 1 - replayed if key == "finisher" else [v + 1 for v in replayed]
    assert refused(record) == f"round 1: stored {key} {result[key]!r} differs from the replayed {replayed!r}"


def test_stored_list_in_another_order_is_a_different_result(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    raw = record["rounds"][0]["result"]["raw"]
    assert raw[0] != raw[1]
    record["rounds"][0]["result"]["raw"] = raw[::-1]
    assert refused(record).startswith("round 0: stored raw")
    # a shared win: winners [2, 1] is not [1, 2]
    game = make_game([make_deck([G_HIGH, G_LOW, G_LOW], 5)], 3)
    open_all(game)
    play_round(game)
    tie = records.game_to_record(game)
    assert tie["result"]["winners"] == [1, 2]
    tie["result"]["winners"] = [2, 1]
    assert refused(tie) == "result: stored winners [2, 1] differ from the replayed [1, 2]"


def test_stored_final_result_differs(base: dict[str, Any]) -> None:
    for key in ("totals", "ranks", "winners"):
        record = copy.deepcopy(base)
        record["result"][key] = [*record["result"][key], 0]
        assert refused(record).startswith(f"result: stored {key} ")
    record = copy.deepcopy(base)
    record["result"]["totals"] = [float(t) for t in record["result"]["totals"]]  # 29.0 is not the integer 29
    assert refused(record).startswith("result: stored totals")
    record = copy.deepcopy(base)
    del record["result"]
    assert refused(record) == "result: expected an object with totals, ranks and winners"


def test_game_structure_errors(base: dict[str, Any]) -> None:
    short = copy.deepcopy(base)
    short["rounds"][0]["actions"] = short["rounds"][0]["actions"][:-3]
    assert refused(short).startswith("round 0: the actions end before the round does (seat ")
    long = copy.deepcopy(base)
    long["rounds"][0]["actions"].append({"seat": 0, "act": "draw"})
    n = len(long["rounds"][0]["actions"]) - 1
    assert refused(long) == f"round 0, action {n}: the round was already over"
    extra_round = copy.deepcopy(base)
    extra_round["rounds"].append(copy.deepcopy(base["rounds"][0]))
    assert refused(extra_round) == "round 2: the game was already over after round 1"
    cut = copy.deepcopy(base)
    cut["rounds"] = cut["rounds"][:1]
    assert refused(cut).startswith("the record ends after round 0, but the game goes on")
    empty = copy.deepcopy(base)
    empty["rounds"] = []
    assert refused(empty) == "rounds: a record holds at least one round"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "skyjo-game/2"}, "format is 'skyjo-game/2', expected 'skyjo-game/1'"),
        ({"format": None}, "format is None, expected 'skyjo-game/1'"),
        ({"players": [f"p{i}" for i in range(9)]}, "players: Skyjo is played by 2 to 8 players, the record has 9"),
        ({"players": ["solo"]}, "players: Skyjo is played by 2 to 8 players, the record has 1"),
        ({"players": "ab"}, "players must be a list, got str"),
        ({"players": ["a", 2]}, "players: expected a list of display names (strings)"),
        ({"rules": {"preset": "official", "jokers": True}}, "rules: unknown rules option 'jokers'"),
        ({"rules": {"preset": "house"}}, "rules: unknown rules preset 'house'"),
        ({"rules": {"end_score": "100"}}, "rules: rules option end_score must be an integer, got '100'"),
        ({"rules": "official"}, 'rules: expected an object like {"preset": "official"}, got str'),
        ({"rounds": {}}, "rounds must be a list, got dict"),
    ],
)
def test_whole_record_problems_have_no_location(base: dict[str, Any], change: dict[str, Any], message: str) -> None:
    record = {**copy.deepcopy(base), **change}
    assert refused(record).startswith(message)


def test_unknown_keys_ignored_meta_ignored(base: dict[str, Any]) -> None:
    record = copy.deepcopy(base)
    record["comment"] = "from a bug report"
    record["meta"] = {"seed": None, "timings": [1.5, 2], "anything": {"nested": True}}
    record["rounds"][0]["duration_ms"] = 1234
    record["rounds"][0]["actions"][0]["think_ms"] = 12
    record["rounds"][0]["result"]["note"] = "ok"
    record["result"]["elo"] = 1500
    assert records.replay(record).totals == base["result"]["totals"]
    del record["meta"]
    assert records.replay(record).totals == base["result"]["totals"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "skyjo-game/1",', "not valid JSON (line 1, column 27): Expecting property name"),
        ("", "not valid JSON (line 1, column 1): Expecting value"),
        ("[1, 2]", "expected a JSON object with format 'skyjo-game/1', got list"),
        ("null", "expected a JSON object with format 'skyjo-game/1', got NoneType"),
    ],
)
def test_malformed_json(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(RecordError) as info:
        records.loads(text)
    assert str(info.value).startswith(message)
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordError) as info:
        records.load(path)
    assert str(info.value) == f"{path}: {message}" or str(info.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize(("text", "message"), [("[" * 100_000, "maximum recursion depth"), ("1" * 5000, "4300")])
def test_pathological_json_is_a_record_error(text: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        records.loads(text)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"missing\.json: cannot read: No such file or directory"):
        records.load(tmp_path / "missing.json")
    (tmp_path / "latin1.json").write_bytes(b'{"players": ["\xe9"]}')
    with pytest.raises(RecordError, match="not UTF-8 text"):
        records.load(tmp_path / "latin1.json")


def test_record_of_every_round_matches_json_types() -> None:
    """Records are plain JSON: a record survives json.dumps/loads unchanged."""
    record = records.game_to_record(played("json", 4))
    assert json.loads(json.dumps(record)) == record


# ----------------------------------------------------------------- fuzzing

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 200) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=5,
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(obj, dict):
        for key, value in obj.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj[:6]):
            found += _paths(value, (*prefix, i))
    return found


def _paths_all(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a record, each list element included."""
    found = [prefix] if prefix else []
    if isinstance(obj, dict):
        for key, value in obj.items():
            found += _paths_all(value, (*prefix, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found += _paths_all(value, (*prefix, i))
    return found


_BASE = records.load(DATA / "greedy_random.json")
_BASE_PATHS = _paths(_BASE)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_BASE_PATHS), _JSON_VALUES, st.booleans()), min_size=1, max_size=3))
def test_any_damaged_record_is_refused_with_a_record_error(changes: list[tuple[tuple[Any, ...], Any, bool]]) -> None:
    """Whatever is changed, replay either accepts the record or raises RecordError: never another exception."""
    record = copy.deepcopy(_BASE)
    for path, value, delete in changes:
        parent: Any = record
        try:
            for key in path[:-1]:
                parent = parent[key]
            if delete and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    try:
        records.replay(record)
    except RecordError as exc:
        assert str(exc)


# ----------------------------------------------------------------- fuzzing: mutations of real records

#: Where a RecordError may point: a round, an action of a round, or a named part of the record.
_LOCATED = re.compile(
    r"^(?:round (?P<round>\d+)(?:, action (?P<action>\d+))?: "
    r"|format is |rules: |players[: ]|rounds[: ]|result: |the record ends after round \d+)"
)

_DATA_RECORDS = [json.loads((DATA / name).read_text()) for name in ("greedy_random.json",)] + [
    records.game_to_record(played("fuzz-4", 4, Rules(end_score=30)))
]
_ALL_PATHS = [(r, p) for r, record in enumerate(_DATA_RECORDS) for p in _paths_all(record)]
_ACT_TEXTS = ["draw", "take", "reveal", "swap", "pass", "", "DRAW", 3, None]


def _mutate(record: Any, path: tuple[Any, ...], op: str, value: Any, n: int) -> None:
    """Apply one mutation at ``path``: a new value, a deletion, a reorder, a length or a type change."""
    parent: Any = record
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    target = parent[key]
    if op == "set":
        parent[key] = value
    elif op == "delete":
        del parent[key]
    elif op == "nudge" and isinstance(target, int) and not isinstance(target, bool):
        parent[key] = target + (n or 1)
    elif op == "retype":
        parent[key] = [str(target), [target], {"v": target}, float(target) if _is_number(target) else 1.5, True][n % 5]
    elif op == "act":
        parent[key] = _ACT_TEXTS[n % len(_ACT_TEXTS)]
    elif isinstance(target, list) and target:
        i, j = n % len(target), (n * 7 + 3) % len(target)
        if op == "swap":
            target[i], target[j] = target[j], target[i]
        elif op == "truncate":
            del target[i:]
        elif op == "duplicate":
            target.insert(i, copy.deepcopy(target[j]))
        elif op == "reverse":
            target.reverse()
    elif isinstance(target, dict) and target:
        if op == "swap":  # reorder the keys (JSON objects are unordered: must not matter)
            parent[key] = dict(reversed(list(target.items())))
        elif op == "duplicate":
            target[f"extra{n}"] = value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_located(record: Any, exc: RecordError) -> None:
    """A RecordError is one line that says where: a round and action that exist, or a part of the record."""
    message = str(exc)
    assert message and "\n" not in message
    found = _LOCATED.match(message)
    assert found is not None, message
    if found["round"] is not None:
        k = int(found["round"])
        rounds = record["rounds"]
        assert k < len(rounds), message
        if found["action"] is not None:
            assert int(found["action"]) < len(rounds[k]["actions"]), message


_OPS = st.sampled_from(["set", "delete", "nudge", "retype", "act", "swap", "truncate", "duplicate", "reverse"])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.sampled_from(_ALL_PATHS), _OPS, _JSON_VALUES, st.integers(-13, 13)), min_size=1, max_size=4)
)
def test_mutated_real_records_are_accepted_or_refused_with_a_located_error(
    mutations: list[tuple[tuple[int, tuple[Any, ...]], str, Any, int]],
) -> None:
    """Real records, mutated in fields, types, lengths and orders: replay accepts, or says where it is wrong."""
    base = mutations[0][0][0]
    record = copy.deepcopy(_DATA_RECORDS[base])
    for (which, path), op, value, n in mutations:
        if which != base:
            continue
        try:
            _mutate(record, path, op, value, n)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or retyped what this path leads through
    try:
        records.replay(record)
    except RecordError as exc:
        _check_located(record, exc)
    # and the same record as text, through the reader
    try:
        records.replay(records.loads(json.dumps(record)))
    except RecordError as exc:
        _check_located(record, exc)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 10**9), st.integers(1, 8), st.sampled_from(["flip", "cut", "insert", "delete"]))
def test_damaged_record_text_is_read_or_refused_with_a_record_error(where: int, count: int, how: str) -> None:
    """Bytes of a record file damaged at random: load() accepts and replays, or raises RecordError."""
    text = (DATA / "greedy_random.json").read_bytes()
    at = where % len(text)
    if how == "flip":
        damaged = text[:at] + bytes((b ^ (1 << (where % 8))) for b in text[at : at + count]) + text[at + count :]
    elif how == "cut":
        damaged = text[:at]
    elif how == "insert":
        damaged = text[:at] + bytes([where % 256]) * count + text[at:]
    else:
        damaged = text[:at] + text[at + count :]
    try:
        record = records.loads(damaged.decode("utf-8"))
        records.replay(record)
    except UnicodeDecodeError:
        pass  # not text: load() below says so
    except RecordError as exc:
        assert str(exc) and "\n" not in str(exc)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "damaged.json"
        path.write_bytes(damaged)
        try:
            records.check_file(path)
        except RecordError as exc:
            assert str(exc).startswith(str(path)) or _LOCATED.match(str(exc)), str(exc)
