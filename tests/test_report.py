"""``skyjo-ref report`` without a browser: the viewer's positions against the engine, sizes, CLI messages."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from report_stores import add_games, mixed_size_store, play, round_robin_store
from skyjo_bot import Action, Bot, View
from skyjo_bot.types import Rules, SlotState, TimeControl
from skyjo_ref.bots import make_builtin
from skyjo_ref.cli.replay_view import ReplayCursor
from skyjo_ref.match import GameSetup, InProcessSeat, play_game
from skyjo_ref.report import ReportOptions, collect, write_report
from skyjo_ref.report.data import h2h_p
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import Store
from skyjo_ref.tournament.tables import json_safe

MIB = 1024 * 1024
STATE_CODE = {SlotState.HIDDEN: 0, SlotState.REVEALED: 1, SlotState.REMOVED: 2}

NODE_DUMP = """
const SkyjoTable = require(process.env.SKYJO_VIEWER_JS);
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = input.records.map((record) => {
  const t = SkyjoTable.positions(record, input.presets);
  return { problems: t.problems, totals: t.totals, rounds: t.positions.map((list) => list.map((p) => {
    const d = SkyjoTable.decisionAt(record, p);
    return { states: p.states, values: p.values.map((v, s) => v.map((x, k) => (p.states[s][k] === 1 ? x : null))),
      top: p.discard.length ? p.discard[p.discard.length - 1] : null, draw: p.drawSize, hand: p.hand,
      seat: d && d.seat, kind: d && d.kind, legal: d && d.legal };
  })) };
});
process.stdout.write(JSON.stringify(out));
"""


def python_positions(record: dict[str, Any]) -> list[list[dict[str, Any]]]:
    cursor = ReplayCursor(record)
    out = []
    for k in range(cursor.num_rounds):
        line = []
        for done in range(cursor.actions_in(k) + 1):
            pos = cursor.position(k, done)
            entry: dict[str, Any] = {
                "states": [[STATE_CODE[s] for s in g.states] for g in pos.grids],
                "values": [list(g.values) for g in pos.grids],
            }
            if not pos.round_over:
                game_view = cursor_view(cursor, k, done)
                entry.update(
                    top=pos.discard_top,
                    draw=pos.draw_pile_size,
                    hand=pos.hand,
                    seat=pos.seat,
                    kind=pos.decision.value if pos.decision else None,
                    legal=[a.to_dict() for a in game_view],
                )
            line.append(entry)
        out.append(line)
    return out


def cursor_view(cursor: ReplayCursor, round_index: int, done: int) -> list[Any]:
    """The legal actions at a position, from the engine itself."""
    from skyjo_ref.rules.engine import FixedDealer, Game

    game = Game(
        len(cursor.players),
        cursor.rules,
        dealer=FixedDealer([r.deck for r in cursor.rounds], [r.reshuffles for r in cursor.rounds]),
        players=cursor.players,
    )
    for k, log in enumerate(cursor.rounds[: round_index + 1]):
        for logged in log.actions[: done if k == round_index else None]:
            game.apply(logged.action, auto=logged.auto)
    return list(game.legal_actions())


def test_the_page_viewer_rebuilds_every_position_the_engine_plays(tmp_path: Path) -> None:
    """The viewer (JavaScript, run here by Node) and the rules engine agree on every position of real games."""
    node = shutil.which("node")
    assert node, "Node.js is needed (see the README's test command)"
    records = [
        play(["a", "b"], "1", ["random", "random"]),
        play(["a", "b", "c", "d"], "2", ["random", "greedy", "random", "greedy"]),
        play(["a", "b", "c"], "3", ["greedy", "greedy", "greedy"]),
        play(["a", "b"], "4", ["random", "random"], Rules.from_dict({"preset": "french", "column_clear": False})),
        play(["a", "b", "c", "d", "e", "f", "g", "h"], "5", ["random"] * 8),
    ]
    presets = collect_presets()
    viewer = files("skyjo_ref.report").joinpath("static", "viewer.js")
    done = subprocess.run(
        [node, "-e", NODE_DUMP],
        env={**os.environ, "SKYJO_VIEWER_JS": str(viewer)},
        input=json.dumps({"records": records, "presets": presets}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    from_js = json.loads(done.stdout)
    reshuffled = cleared = 0
    for record, js in zip(records, from_js):
        assert js["problems"] == []
        assert js["totals"] == record["result"]["totals"]
        expected = python_positions(record)
        for k, (py_round, js_round) in enumerate(zip(expected, js["rounds"], strict=True)):
            for i, (py, got) in enumerate(zip(py_round, js_round, strict=True)):
                for key, value in py.items():
                    assert got[key] == value, f"round {k} after {i} actions: {key}"
        reshuffled += sum(len(r["reshuffles"]) for r in record["rounds"])
        cleared += sum(1 for line in expected for p in line[-1:] for g in p["states"] if 2 in g)
    assert reshuffled > 0 and cleared > 0  # the sample covers rebuilt draw piles and removed columns


def collect_presets() -> dict[str, Any]:
    from skyjo_bot.types import PRESETS

    return {k: dict(v) for k, v in PRESETS.items()}


def test_ten_thousand_games_make_a_report_under_5_mib(tmp_path: Path) -> None:
    bots = [f"bot{i:02d}" for i in range(20)]
    store = round_robin_store(tmp_path / "big", bots, deals=27, pool=4)  # 190 tables x 27 deals x 2 seatings
    assert store.count() == 10_260
    store.close()
    out = tmp_path / "report.html"
    data = write_report(tmp_path / "big", out, ReportOptions(bootstrap=0))
    size = out.stat().st_size
    assert size < 5 * MIB, f"{size / MIB:.2f} MiB"
    assert len(data["results"]) == 10_260  # every result is in the page
    embedded = sum(len(json.dumps(r, separators=(",", ":"))) for r in data["embedded"].values())
    assert embedded <= ReportOptions().record_budget
    # every pair of bots can open at least one of its games from the page alone
    pairs = {tuple(sorted(r["players"])) for r in data["embedded"].values()}
    assert len(pairs) == 190


def test_the_report_reads_the_store_and_never_writes_it(tmp_path: Path) -> None:
    store = round_robin_store(tmp_path / "run", ["greedy", "random", "random2"], deals=2)
    store.close()
    db = tmp_path / "run" / "results.sqlite"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    data = write_report(tmp_path / "run", tmp_path / "run" / "report.html")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert data["games_count"] == 12 and len(data["embedded"]) == 12  # small runs carry every record
    greedy = data["per_bot"]["greedy"]
    assert greedy["decisions"]["count"] == sum(
        len(times[seat])
        for r in data["embedded"].values()
        for seat, name in enumerate(r["players"])
        if name == "greedy"
        for times in [r["meta"]["decision_ms"]]
    )
    assert greedy["rounds"] >= greedy["finished"] >= greedy["penalised"]
    assert data["history"]["points"][-1]["games"] == 12
    assert data["records_dir"] == "games"  # the page next to the run opens games/ beside it
    (tmp_path / "elsewhere").mkdir()
    moved = write_report(tmp_path / "run", tmp_path / "elsewhere" / "r.html")
    assert moved["records_dir"] == "../run/games"


def test_head_to_head_significance_is_a_sign_test() -> None:
    assert h2h_p(5, 5) == 1.0
    assert h2h_p(2, 0) == 0.5  # two pairings won prove nothing
    assert h2h_p(9, 1) < 0.05 < h2h_p(8, 2)  # exact: 0.021 and 0.109
    assert abs(h2h_p(9, 1) - 0.021484375) < 1e-12
    assert h2h_p(1030, 970) > 0.05 > h2h_p(1060, 940)  # the normal approximation above 400
    assert h2h_p(0, 30) == h2h_p(30, 0) < 1e-8


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "missing"], "error: missing: no such folder: expected a tournament output folder"),
        (["report", "."], "no results.sqlite here: expected a tournament output folder"),
        (["report", "run", "-o", "nowhere/r.html"], "--output nowhere/r.html: folder nowhere does not exist"),
        (["report", "run", "-o", "run"], "--output run: is a folder; expected a file name such as report.html"),
        (["replay", "--html", "run/games/x.json"], "run/games/x.json: cannot read"),
        (["replay", "-o", "x.html", "g.json"], "--output is where --html writes its page: add --html"),
    ],
)
def test_bad_input_gets_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    round_robin_store(tmp_path / "run", ["a", "b"], deals=1).close()
    (tmp_path / "g.json").write_text(json.dumps(play(["a", "b"], "1", ["random", "random"])), encoding="utf-8")
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


class _Raises(Bot):
    """Raises on every third decision: the referee strikes it (illegal) and plays for it."""

    def __init__(self) -> None:
        self.calls = 0

    def decide(self, view: View) -> Action:
        self.calls += 1
        if self.calls % 3 == 0:
            raise ValueError("no idea what to do")
        return view.legal_actions[0]


def test_per_bot_faults_carry_their_text_and_count_in_the_leaderboard(tmp_path: Path) -> None:
    seats = [InProcessSeat(_Raises(), "shaky"), InProcessSeat(make_builtin("greedy", 1), "greedy")]
    tc = TimeControl(decision_ms=5000, bank_ms=600_000, max_strikes=1000, grace_ms=1000)
    record = asyncio.run(play_game(GameSetup("g", seats, seed="3", time_control=tc)))
    with Store(tmp_path / "run") as store:
        store.add_game(GameId(("greedy", "shaky"), 0, 1), "s", record, 0.1)
        store.add_fault("shaky", "crash", "exit code 3; restarted", "greedy+shaky/0/1")
    data = collect(tmp_path / "run", ReportOptions(bootstrap=0))
    shaky = data["per_bot"]["shaky"]
    strikes = len(record["meta"]["strikes"])
    assert strikes > 0 and shaky["fault_count"] == strikes + 1
    assert "no idea what to do" in shaky["faults"][0]["detail"] and shaky["faults"][0]["kind"] == "illegal"
    assert shaky["faults"][-1] == {
        "game": "greedy+shaky/0/1",
        "kind": "crash",
        "detail": "exit code 3; restarted",
        "round": None,
        "action": None,
    }
    row = next(r for r in data["leaderboard"] if r["name"] == "shaky")
    assert row["strikes"] == row["illegal"] == strikes and row["timeouts"] == 0
    assert data["per_bot"]["greedy"]["fault_count"] == 0


def test_rating_history_marks_runs_where_the_store_paused(tmp_path: Path) -> None:
    store = round_robin_store(tmp_path / "run", ["greedy", "random", "random2"], deals=4)
    with store.lock, store.db:  # the last two deals were played a day later, as a league that grows
        store.db.execute("UPDATE games SET finished_at = finished_at + 86400 WHERE deal >= 2")
    store.close()
    data = collect(tmp_path / "run", ReportOptions(bootstrap=0))
    history = data["history"]
    assert history["runs"] == [12]
    assert [p["games"] for p in history["points"]] == list(range(2, 25, 2))  # a point per duplicate block
    final = history["points"][-1]["elo"]
    for name, value in zip(data["bots"], final):  # the last point is the leaderboard's rating
        row = next(r for r in data["leaderboard"] if r["name"] == name)
        assert abs(value - row["elo"]) <= 0.1


def test_the_gate_summary_says_what_the_gate_prints() -> None:
    """Stop bounds, nElo and LOS: taken from the gate when it stored them, else computed by the gate's own code."""
    from skyjo_ref.report.data import gate_summary
    from skyjo_ref.stats import sprt

    old = {"alpha": 0.05, "beta": 0.05, "pentanomial": [1, 4, 10, 15, 10], "history": [[2, -0.5], [4, 1.0], [6, 2.0]]}
    summary = gate_summary(old)
    lower, upper = sprt.llr_bounds(0.05, 0.05)
    o0, o1 = sprt.overshoot([-0.5, 1.0, 2.0])
    assert summary["bounds"] == [lower, upper]
    assert summary["stop_bounds"] == [lower + o0, upper - o1] and o0 > 0 and o1 > 0
    assert "overshoot" in summary["stop_note"]
    est = sprt.estimate([1, 4, 10, 15, 10])
    assert summary["los"] == est.los and summary["nelo"] == est.nelo
    assert summary["nelo_ci"] == [est.nelo - est.nelo_half, est.nelo + est.nelo_half]
    stored = {**old, "bounds": [-2.9, 2.9], "stop_bounds": [-2.5, 2.6], "nelo": 1.0, "nelo_ci": [0, 2], "los": 0.7}
    kept = gate_summary({**stored, "shard": "1/3"})
    assert kept["stop_bounds"] == [-2.5, 2.6] and kept["los"] == 0.7 and kept["nelo"] == 1.0
    assert "shard 1/3" in kept["stop_note"]


def test_faults_say_where_they_happened(tmp_path: Path) -> None:
    seats = [InProcessSeat(_Raises(), "shaky"), InProcessSeat(make_builtin("greedy", 1), "greedy")]
    tc = TimeControl(decision_ms=5000, bank_ms=600_000, max_strikes=1000, grace_ms=1000)
    record = asyncio.run(play_game(GameSetup("g", seats, seed="3", time_control=tc)))
    with Store(tmp_path / "run") as store:
        store.add_game(GameId(("greedy", "shaky"), 0, 1), "s", record, 0.1)
    faults = collect(tmp_path / "run", ReportOptions(bootstrap=0))["per_bot"]["shaky"]["faults"]
    for fault, strike in zip(faults, record["meta"]["strikes"], strict=False):
        assert (fault["round"], fault["action"]) == (strike["round"], strike["action"])  # 0-based, as recorded


MIXED_BOTS = ["greedy", "greedy2", "random", "random2"]
PL_RATING = {"anchor": "random", "elo": 1000, "bootstrap": 20, "interval_seed": 5}


def strict_json(text: str) -> Any:
    """JSON as a browser's JSON.parse reads it: NaN and Infinity are errors."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"invalid JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def embedded_data(page: Path) -> Any:
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page.read_text("utf-8"), re.S)
    assert found, "the page embeds its data"
    return strict_json(found.group(1))


def ratings_json(folder: Path) -> Any:
    done = cli("ratings", str(folder), "--json", "-", cwd=folder.parent)
    assert done.returncode == 0, done.stderr
    return strict_json(done.stdout)


@pytest.mark.parametrize("model", ["plackett-luce", "bradley-terry"])
def test_a_mixed_size_league_shows_the_tables_ratings_json_gives(tmp_path: Path, model: str) -> None:
    """Per size, seat and starter effects as ``ratings --json``; rated with the store's model, the history too."""
    rating = {**PL_RATING, "model": model, "interval": "normal" if model == "plackett-luce" else "percentile"}
    mixed_size_store(tmp_path / "run", MIXED_BOTS, [2, 3, 4], deals=2, rating=rating).close()
    data = write_report(tmp_path / "run", tmp_path / "report.html")
    expected = ratings_json(tmp_path / "run")
    assert data["rating"]["model"] == model and data["rating"] == {**expected["rating"], "model_name": ANY_NAME[model]}
    assert data["leaderboard"] == [{**bot, "timeouts": 0, "illegal": 0} for bot in expected["bots"]]
    assert sorted(data["by_size"]) == ["2", "3", "4"]
    assert data["by_size"] == expected["by_size"]
    for rows in data["by_size"].values():  # each size's own numbers, not the leaderboard's
        assert {r["name"] for r in rows} == set(MIXED_BOTS) and all(r["win_rate"] is not None for r in rows)
    assert data["by_size"]["2"][0]["games"] == 6 * 2  # 3 tables a bot, 2 seatings, 2 deals
    assert data["seat_effects"] == expected["seat_effects"] and len(data["seat_effects"]["4"]) == 4
    assert data["starter_effects"] == expected["starter_effects"] and data["starter_effects"]["3"]["games"] == 48
    final = data["history"]["points"][-1]["elo"]  # the history ends on the leaderboard, fitted the same way
    for name, value in zip(data["bots"], final, strict=True):
        row = next(r for r in data["leaderboard"] if r["name"] == name)
        assert abs(value - row["elo"]) <= 0.05
    assert embedded_data(tmp_path / "report.html")["by_size"] == expected["by_size"]


ANY_NAME = {"plackett-luce": "Plackett-Luce", "bradley-terry": "Bradley-Terry"}


def test_the_two_models_differ_on_these_tables_so_the_settings_matter(tmp_path: Path) -> None:
    """The test above would pass with either fit if the models agreed here: they do not (3 and 4 players)."""
    mixed_size_store(tmp_path / "run", MIXED_BOTS, [3, 4], deals=1, rating={**PL_RATING, "bootstrap": 0}).close()
    old_store = collect(tmp_path / "run")  # a store without "model" was rated pairwise: ratings reads it so
    assert old_store["rating"]["model"] == "bradley-terry" and old_store["rating"]["interval_method"] is None
    with Store(tmp_path / "run") as store:
        store.set_info("rating", {**PL_RATING, "bootstrap": 0, "model": "plackett-luce"})
    new_store = collect(tmp_path / "run")
    elo = {m: {r["name"]: r["elo"] for r in d["leaderboard"]} for m, d in (("bt", old_store), ("pl", new_store))}
    assert max(abs(elo["bt"][n] - elo["pl"][n]) for n in MIXED_BOTS) > 5
    for data in (old_store, new_store):
        final = dict(zip(data["bots"], data["history"]["points"][-1]["elo"], strict=True))
        assert all(abs(final[r["name"]] - r["elo"]) <= 0.05 for r in data["leaderboard"])


def test_one_size_shows_no_table_sizes_section(tmp_path: Path) -> None:
    round_robin_store(tmp_path / "run", ["greedy", "random", "random2"], deals=2).close()
    data = write_report(tmp_path / "run", tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text("utf-8")
    assert data["by_size"] == {} and 'id="sizes"' not in page and 'href="#sizes"' not in page
    assert list(data["seat_effects"]) == ["2"]  # the seats of the one size are still shown


@pytest.mark.parametrize("deals", [1, 3])
def test_a_bot_with_one_duplicate_block_gets_no_interval_not_nan(tmp_path: Path, deals: int) -> None:
    """Its bootstrap interval is infinite (a bot in one block of many) or NaN (one block in all): the page
    shows a dash, and the JSON (the page's and ``ratings --json``) null."""
    rating = {
        "anchor": None,
        "elo": 1500,
        "bootstrap": 30,
        "interval_seed": 1,
        "model": "plackett-luce",
        "interval": "normal",
    }
    store = round_robin_store(tmp_path / "run", ["greedy", "random"], deals=deals, rating=rating)
    late = [GameId(("greedy", "late"), 0, r) for r in range(2)]
    add_games(store, [(g, play(g.seats, "9", ["greedy", "random"])) for g in late], finished_from=1.8e9)
    store.close()
    data = write_report(tmp_path / "run", tmp_path / "report.html")  # the page refuses NaN: this must not raise
    row = next(r for r in data["leaderboard"] if r["name"] == "late")
    assert row["elo"] is not None and row["elo_low"] is None and row["elo_high"] is None
    assert all(r["elo_low"] is not None for r in data["leaderboard"] if r["name"] != "late") == (deals > 1)
    page = embedded_data(tmp_path / "report.html")  # strict: no NaN, no Infinity
    assert next(r for r in page["leaderboard"] if r["name"] == "late")["elo_low"] is None
    html = re.search(r'<tr data-bot="late">.*?</tr>', (tmp_path / "report.html").read_text("utf-8"))
    assert html and '<td data-col="interval">—</td>' in html.group(0) and "None" not in html.group(0)
    expected = ratings_json(tmp_path / "run")  # strict too
    assert next(b for b in expected["bots"] if b["name"] == "late")["elo_low"] is None


def test_json_safe_writes_null_for_every_number_json_cannot_carry() -> None:
    """A NaN or an infinity anywhere (a table, a list, a tuple) is null, never an invalid token or a crash."""
    data = {"a": [1.0, math.nan, (math.inf, {"b": -math.inf})], "c": 2, "d": "x", "e": None}
    assert json.loads(json.dumps(json_safe(data), allow_nan=False)) == {
        "a": [1.0, None, [None, {"b": None}]],
        "c": 2,
        "d": "x",
        "e": None,
    }


def test_at_forty_bots_every_pair_carries_a_game_and_the_page_says_when_one_does_not(tmp_path: Path) -> None:
    """780 pairs, 1,560 games: one record per pair goes in the page even past --embed-mib (up to 4x it)."""
    bots = [f"{'greedy' if i % 3 == 0 else 'random'}-{i:02d}" for i in range(40)]
    round_robin_store(tmp_path / "forty", bots, deals=1, pool=1).close()
    out = tmp_path / "forty.html"
    data = write_report(tmp_path / "forty", out, ReportOptions(bootstrap=0))
    pairs = {tuple(sorted(r["players"])) for r in data["embedded"].values()}
    assert len(pairs) == 780 and data["pairs_carried"] == [780, 780]
    assert out.stat().st_size < 6 * MIB, f"{out.stat().st_size / MIB:.2f} MiB"  # 4.55 MiB measured
    assert 'id="pairs-carried"' not in out.read_text(encoding="utf-8")
    # a budget too small for every pair: the page says how many pairs carry a game, and where the rest are
    small = write_report(tmp_path / "forty", tmp_path / "small.html", ReportOptions(bootstrap=0, record_budget=200_000))
    carried, met = small["pairs_carried"]
    assert 0 < carried < met == 780
    text = (tmp_path / "small.html").read_text(encoding="utf-8")
    assert f"{carried} of the 780 pairs have a game in this page" in text
