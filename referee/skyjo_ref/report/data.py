"""What a report shows, read from a results store and its records (never written to).

Everything here is plain JSON-able data: the page embeds it once and draws
it in the browser. The leaderboard is computed exactly as ``skyjo-ref ratings``
computes it (same store settings, same code), so the two always agree.
"""

from __future__ import annotations

import bisect
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from skyjo_bot.types import PRESETS

from skyjo_ref.stats import sprt
from skyjo_ref.tournament.store import RECORDS_DIR, Store, StoredGame
from skyjo_ref.tournament.tables import MODEL_NAMES, RatingConfig, RunningFit, Tables, rated
from skyjo_ref.tournament.versions import current_table, current_view, label

FORMAT: Final = "skyjo-report/1"
#: Upper edges (ms) of the decision-time histogram's bins; the last bin is open.
TIME_BINS_MS: Final = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0)
#: Points of the rating history (checkpoints spread evenly over the games, by duplicate block).
HISTORY_POINTS: Final = 40
#: A pause this long (seconds) between two finished games starts a new run on the history chart.
RUN_GAP_S: Final = 600.0
#: Per bot, the faults listed with their text (the rest are counted).
FAULTS_LISTED: Final = 40
#: Records embedded when a report has no other limit: every game up to this many bytes of records.
DEFAULT_RECORD_BUDGET: Final = 3 * 1024 * 1024
#: One game per pair of bots is carried even past the record budget, up to this many times it.
COVER_FACTOR: Final = 4
#: Of a pair's games, the first this many are weighed for the smallest record to carry.
COVER_CANDIDATES: Final = 4
#: Meta keys an embedded record keeps (the viewer's needs); the rest stays in games/*.json.
KEPT_META: Final = ("decision_ms", "strikes", "forfeited")
#: p below which a head-to-head cell is shaded as significant (sign test, two-sided).
SIGNIFICANT_P: Final = 0.05


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """How the report is made: rating settings as ``ratings`` takes them, and the size policy."""

    bootstrap: int | None = None  # None: as the store's config said (400 by default)
    record_budget: int = DEFAULT_RECORD_BUDGET  # bytes of embedded records at most
    history_points: int = HISTORY_POINTS


def _finished_order(store: Store) -> list[tuple[str, float]]:
    """Game keys with the time each finished, oldest first (ties by key)."""
    with store.lock:
        rows = store.db.execute("SELECT key, finished_at FROM games ORDER BY finished_at, key").fetchall()
    return [(str(k), float(t)) for k, t in rows]


def _records(store: Store) -> dict[str, dict[str, Any]]:
    with store.lock:
        rows = store.db.execute("SELECT key, record FROM games").fetchall()
    return {str(k): json.loads(text) for k, text in rows}


def _percentile(ordered: Sequence[float], q: float) -> float | None:
    if not ordered:
        return None
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo), 3)


def decision_times(record: Mapping[str, Any]) -> list[list[float]] | None:
    """Per seat, the times of its decisions (``meta.decision_ms``), or None for records without them."""
    meta = record.get("meta")
    times = meta.get("decision_ms") if isinstance(meta, dict) else None
    players = record.get("players", [])
    if not isinstance(times, list) or len(times) != len(players):
        return None
    if not all(isinstance(t, list) and all(isinstance(v, int | float) for v in t) for t in times):
        return None
    return [[float(v) for v in t] for t in times]


def h2h_p(wins: int, losses: int) -> float:
    """Two-sided sign-test p-value of ``wins`` against ``losses`` (level pairings left out).

    Exact binomial up to 400 decisive pairings, normal approximation (with
    continuity correction) above. It treats pairings as independent; those of
    one duplicate block are not quite, so read it as a guide, not a verdict.
    """
    n = wins + losses
    if n == 0:
        return 1.0
    k = max(wins, losses)
    if n <= 400:
        tail = sum(math.comb(n, i) for i in range(k, n + 1)) / 2.0**n
    else:
        z = (k - 0.5 - n / 2) / math.sqrt(n / 4)
        tail = 0.5 * math.erfc(z / math.sqrt(2))
    return min(1.0, 2 * tail)


def _history(
    games: Sequence[StoredGame],
    order: Sequence[tuple[str, float]],
    names: Sequence[str],
    rating: RatingConfig,
    points: int,
) -> dict[str, Any]:
    """Elo (no intervals) after each checkpoint of the games in the order they finished.

    Fitted as the leaderboard is (the store's model, prior and anchor:
    :class:`~skyjo_ref.tournament.tables.RunningFit`), so the last point is
    the leaderboard's Elo. Checkpoints fall on the end of a duplicate block
    where possible, so a point never splits the rotations of one deal.
    """
    by_key = {g.ref: g for g in games}
    finished = dict(order)
    ordered = [by_key[k] for k, _ in order if k in by_key]
    if not ordered:
        return {"by": "games", "points": []}
    ends = [
        i + 1 for i in range(len(ordered)) if i + 1 == len(ordered) or ordered[i + 1].id.block != ordered[i].id.block
    ]
    step = max(1, math.ceil(len(ends) / max(points, 1)))
    cuts = ends[step - 1 :: step]
    if cuts[-1] != len(ordered):
        cuts.append(len(ordered))
    fit = RunningFit(sorted({s.bot for g in ordered for s in g.seats}), rating.model)
    out: list[dict[str, Any]] = []
    previous = 0
    for cut in cuts:
        chunk = ordered[previous:cut]  # only the new games: the sums grow, nothing is counted twice
        previous = cut
        fit.add([(g.id.block, [(s.bot, s.rank) for s in g.seats]) for g in chunk])
        elo = fit.elo(rating.anchor, rating.elo)
        ratings = [None if name not in elo else round(elo[name], 1) for name in names]
        out.append({"games": cut, "finished_at": round(finished[ordered[cut - 1].ref], 1), "elo": ratings})
    times = [finished[g.ref] for g in ordered]
    runs = [i for i in range(1, len(times)) if times[i] - times[i - 1] > RUN_GAP_S]
    return {"by": "duplicate block, in the order games finished", "points": out, "runs": runs}


def _per_bot(
    names: Sequence[str], games: Sequence[StoredGame], recs: Mapping[str, Mapping[str, Any]], store: Store
) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """Per bot: score distribution, round wins, finishes and penalties, decision times, faults."""
    stats: dict[str, dict[str, Any]] = {
        n: {
            "totals": [],
            "rounds": 0,
            "round_wins": 0.0,
            "finished": 0,
            "penalised": 0,
            "times": [],
            "faults": [],
            "fault_count": 0,
        }
        for n in names
    }
    reasons: dict[str, dict[str, int]] = {n: {} for n in names}
    for game in games:
        record = recs.get(game.ref)
        seats = [s.bot for s in game.seats]
        for s in game.seats:
            stats[s.bot]["totals"].append(s.total)
        if record is None:
            continue
        for rnd in record.get("rounds", []):
            result = rnd.get("result") or {}
            scores = result.get("scores") or []
            if not scores:
                continue
            low = min(scores)
            winners = [i for i, v in enumerate(scores) if v == low]
            for seat, bot in enumerate(seats):
                stats[bot]["rounds"] += 1
                if seat in winners:
                    stats[bot]["round_wins"] += 1.0 / len(winners)
            finisher = result.get("finisher")
            if isinstance(finisher, int) and 0 <= finisher < len(seats):
                stats[seats[finisher]]["finished"] += 1
                if result.get("raw", [None] * len(seats))[finisher] != scores[finisher]:
                    stats[seats[finisher]]["penalised"] += 1
        per_seat = decision_times(record)
        if per_seat is not None:
            for seat, bot in enumerate(seats):
                stats[bot]["times"].extend(per_seat[seat])
        meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
        assert isinstance(meta, dict)
        for entry in meta.get("strikes") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("seat"), int) or entry["seat"] >= len(seats):
                continue
            bot = seats[entry["seat"]]
            reason = str(entry.get("reason", "strike"))
            reasons[bot][reason] = reasons[bot].get(reason, 0) + 1
            _add_fault(stats[bot], game.ref, reason, str(entry.get("detail", "")), entry)
        for entry in meta.get("forfeited") or []:
            if isinstance(entry, dict) and isinstance(entry.get("seat"), int) and entry["seat"] < len(seats):
                bot = seats[entry["seat"]]
                _add_fault(stats[bot], game.ref, "forfeit", str(entry.get("reason", "")), entry)
    stored = _stored_keys(games, dict(_finished_order(store)))
    for fault in store.faults():
        if fault.bot in stats:
            key = None if fault.game_key is None else stored.get(fault.game_key)
            detail = fault.detail
            if fault.game_key is not None and key is None:  # a game that never finished: no record to open
                detail = f"{detail} [game {fault.game_key}: not stored]"
            _add_fault(stats[fault.bot], key, fault.kind, detail, {})
    return {name: _bot_summary(st) for name, st in stats.items()}, reasons


def _stored_keys(games: Sequence[StoredGame], finished: Mapping[str, float]) -> dict[str, str]:
    """A fault's game key (the slot's, as the pool knows it) to the stored game's key, which adds ``~`` and the
    table's version tag: the stored key opens the record. A slot played by several versions: the last finished."""
    out: dict[str, str] = {}
    for g in sorted(games, key=lambda g: (finished.get(g.ref, 0.0), g.ref)):
        out[g.ref] = g.ref
        out[g.ref.partition("~")[0]] = g.ref
    return out


def _bot_summary(st: Mapping[str, Any]) -> dict[str, Any]:
    """One bot's gathered numbers as the page shows them (histograms, decision-time percentiles)."""
    times = sorted(st["times"])
    bins = [0] * (len(TIME_BINS_MS) + 1)
    for t in times:
        bins[bisect.bisect_left(TIME_BINS_MS, t)] += 1
    totals: list[int] = st["totals"]
    return {
        "totals": _histogram(totals),
        "rounds": st["rounds"],
        "round_wins": round(st["round_wins"], 3),
        "finished": st["finished"],
        "penalised": st["penalised"],
        "decisions": {
            "count": len(times),
            "bins": bins,
            "median": _percentile(times, 0.5),
            "p90": _percentile(times, 0.9),
            "p99": _percentile(times, 0.99),
            "max": round(times[-1], 3) if times else None,
        },
        "faults": st["faults"],
        "fault_count": st["fault_count"],
    }


def _add_fault(st: dict[str, Any], game: str | None, kind: str, detail: str, where: Mapping[str, Any]) -> None:
    """Count a fault; list it with where it happened (``round``, ``action``: 0-based, as the record has them)."""
    st["fault_count"] += 1
    if len(st["faults"]) < FAULTS_LISTED:
        rnd, action = where.get("round"), where.get("action")
        st["faults"].append(
            {
                "game": game,
                "kind": kind,
                "detail": detail[:300],
                "round": rnd if isinstance(rnd, int) else None,
                "action": action if isinstance(action, int) else None,
            }
        )


def _histogram(values: Sequence[int], bins: int = 12) -> dict[str, Any]:
    """Counts of ``values`` in equal-width bins (``lo`` + k * ``width``)."""
    if not values:
        return {"lo": 0, "width": 1, "counts": []}
    lo, hi = min(values), max(values)
    width = max(1, math.ceil((hi - lo + 1) / bins))
    counts = [0] * math.ceil((hi - lo + 1) / width)
    for v in values:
        counts[(v - lo) // width] += 1
    return {"lo": lo, "width": width, "counts": counts, "mean": round(sum(values) / len(values), 2)}


def slim_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record as the viewer needs it: everything but the meta keys it does not show."""
    out = {k: v for k, v in record.items() if k != "meta"}
    meta = record.get("meta")
    if isinstance(meta, dict):
        kept = {k: meta[k] for k in KEPT_META if k in meta}
        if kept:
            out["meta"] = kept
    return out


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _pairs(game: StoredGame) -> list[tuple[str, str]]:
    bots = sorted({s.bot for s in game.seats})
    return [(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]]


def choose_embedded(
    games: Sequence[StoredGame], recs: Mapping[str, Mapping[str, Any]], budget: int, cover: int = COVER_FACTOR
) -> dict[str, dict[str, Any]]:
    """The records the report carries: all when they fit in ``budget`` bytes, else a few per pair.

    First one game for every pair of bots (the smallest of its first few, a game of k players covering its
    k(k-1)/2 pairs at once), even past ``budget``, up to ``cover`` times it: each head-to-head cell opens a game
    from the page alone. Then, within ``budget``, pairs take turns (every pair's next game, and the next...).
    """
    chosen: dict[str, dict[str, Any]] = {}
    used = 0
    slims: dict[str, tuple[dict[str, Any], int]] = {}

    def slim(key: str) -> tuple[dict[str, Any], int]:
        if key not in slims:
            record = slim_record(recs[key])
            slims[key] = (record, len(_compact(record)))
        return slims[key]

    def take(key: str, limit: int) -> bool:
        nonlocal used
        if key in chosen or key not in recs:
            return True
        record, size = slim(key)
        if used + size > limit:
            return False
        chosen[key] = record
        used += size
        return True

    by_pair: dict[tuple[str, str], list[str]] = {}
    pairs_of: dict[str, list[tuple[str, str]]] = {}
    for g in games:
        pairs_of[g.ref] = _pairs(g)
        for pair in pairs_of[g.ref]:
            by_pair.setdefault(pair, []).append(g.ref)
    covered: set[tuple[str, str]] = set()
    for pair, keys in by_pair.items():
        candidates = [k for k in keys[:COVER_CANDIDATES] if k in recs]
        if pair in covered or not candidates:
            continue
        best = min(candidates, key=lambda k: (slim(k)[1], k))
        if take(best, cover * budget):
            covered.update(pairs_of[best])
    depth = 0  # the games already carried are skipped
    while True:
        progressed = False
        for keys in by_pair.values():
            if depth < len(keys):
                progressed = True
                if not take(keys[depth], budget):
                    return chosen
        if not progressed:
            return chosen
        depth += 1


def pairs_carried(games: Sequence[StoredGame], embedded: Mapping[str, Any]) -> list[int]:
    """How many pairs of bots have a game in the page, of how many pairs met."""
    met = {pair for g in games for pair in _pairs(g)}
    carried = {pair for g in games if g.ref in embedded for pair in _pairs(g)}
    return [len(carried & met), len(met)]


def collect(folder: Path, options: ReportOptions | None = None) -> dict[str, Any]:
    """Everything the report of the store in ``folder`` shows, as JSON-able data."""
    options = options or ReportOptions()
    store = Store(folder, create=False)
    try:
        return _collect(store, folder, options)
    finally:
        store.close()


def _collect(store: Store, folder: Path, options: ReportOptions) -> dict[str, Any]:
    rating = RatingConfig.stored(store.info("rating"), options.bootstrap)  # as ``ratings`` reads it
    games = store.games()
    configured = store.info("bots") or []
    # every version is a row of its own here (old ones as ``bot@version``): the report shows a bot's history
    current = store.current_versions()
    games = current_view(games, current)
    tables = rated(games, configured, rating)
    table_json = tables.to_json()
    names = [row["name"] for row in table_json["bots"]]
    index = {n: i for i, n in enumerate(names)}
    recs = _records(store)
    per_bot, reasons = _per_bot(names, games, recs, store)
    for row in table_json["bots"]:
        counted = reasons[row["name"]]
        row["timeouts"] = counted.get("timeout", 0)
        row["illegal"] = sum(n for r, n in counted.items() if r != "timeout")
    order = _finished_order(store)
    finished = dict(order)
    h2h = _h2h_matrix(names, tables)
    results = _result_rows(games, recs, index, finished)
    embedded = choose_embedded(games, recs, options.record_budget)
    gate = store.info("gate")
    versions = current_table(tables, current, store.version_history(), configured).versions
    return {
        "format": FORMAT,
        "title": store.info("name") or folder.name,
        "source": str(folder),
        "generated_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "records_dir": RECORDS_DIR,
        "fingerprint": store.fingerprint(),
        "rating": {**table_json["rating"], "model_name": MODEL_NAMES.get(rating.model, rating.model)},
        "notes": table_json["notes"],
        "games_count": len(games),
        "duplicate_blocks": table_json["duplicate_blocks"],
        "bots": names,
        "leaderboard": table_json["bots"],
        "h2h": h2h,
        # per table size, as ``ratings --json`` writes them (docs/tournaments.md)
        "by_size": table_json["by_size"],
        "seat_effects": table_json["seat_effects"],
        "starter_effects": table_json["starter_effects"],
        "significant_p": SIGNIFICANT_P,
        "results": results,
        "files": {g.ref: g.file_name for g in games},
        "embedded": embedded,
        "pairs_carried": pairs_carried(games, embedded),
        "history": _history(games, order, names, rating, options.history_points),
        "per_bot": per_bot,
        "gate": gate_summary(gate) if isinstance(gate, dict) else None,
        "versions": versions,
        "labels": version_labels(names, versions, current),
        # each row's bot, for its versions' list in the per-bot section (an old version's row is ``bot@version``)
        "version_of": {
            v["bot"] if current.get(v["bot"]) == v["version"] else label(v["bot"], v["version"]): v["bot"]
            for v in versions
        },
        "presets": {k: dict(v) for k, v in PRESETS.items()},
        "time_bins_ms": list(TIME_BINS_MS),
    }


def _h2h_matrix(names: Sequence[str], tables: Tables) -> list[list[list[float] | None]]:
    """Per pair of rows: games, wins, draws, losses and the p-value of wins against losses (None: no games)."""
    h2h: list[list[list[float] | None]] = []
    for a in names:
        line: list[list[float] | None] = []
        for b in names:
            cell = tables.head_to_head.get(a, {}).get(b)
            if a == b or cell is None or cell.games == 0:
                line.append(None)
                continue
            p = h2h_p(cell.wins, cell.losses)
            line.append([cell.games, cell.wins, cell.draws, cell.losses, float(f"{p:.3g}")])
        h2h.append(line)
    return h2h


def _result_rows(
    games: Sequence[StoredGame], recs: Mapping[str, Any], index: Mapping[str, int], finished: Mapping[str, float]
) -> list[list[Any]]:
    """Per game, the page's compact row: its key, rows, totals, ranks, strikes, forfeits, rounds and end time."""
    results = []
    for g in games:
        record = recs.get(g.ref)
        strikes = [s.strikes for s in g.seats]
        results.append(
            [
                g.ref,
                [index[s.bot] for s in g.seats],
                [s.total for s in g.seats],
                [s.rank for s in g.seats],
                strikes if any(strikes) else 0,
                [i for i, s in enumerate(g.seats) if s.forfeit],
                len(record["rounds"]) if record else None,
                round(finished.get(g.ref, 0.0)),
            ]
        )
    return results


def version_labels(
    names: Sequence[str], versions: Sequence[Mapping[str, Any]], current: Mapping[str, str]
) -> dict[str, str]:
    """How the page names an older version's row (``low@3f2a9c1b0d4e`` in the fit): ``low (v1, older)``, so it
    does not read as another bot; the current versions keep their plain names."""
    out = {}
    for v in versions:
        name = label(v["bot"], v["version"])
        if current.get(v["bot"]) != v["version"] and name in names:
            out[name] = f"{v['bot']} (v{v['number']}, older)"
    return out


def gate_summary(info: Mapping[str, Any]) -> dict[str, Any]:
    """The gate's stored info, completed with what an older gate did not store (stop bounds, nElo, LOS).

    Computed with the gate's own functions (:mod:`skyjo_ref.stats.sprt`),
    so the page says what ``skyjo-ref gate`` prints.
    """
    out = dict(info)
    lower, upper = (float(b) for b in out.get("bounds") or sprt.llr_bounds(out["alpha"], out["beta"]))
    out["bounds"] = [lower, upper]
    history = [float(p[1]) for p in out.get("history") or []]
    if "stop_bounds" not in out:
        o0, o1 = sprt.overshoot(history)
        out["stop_bounds"] = [lower + o0, upper - o1]
    stop_lo, stop_hi = out["stop_bounds"]
    if out.get("shard"):
        out["stop_note"] = f"(shard {out['shard']}: a shard stops at 1/N of Wald's bounds)"
    elif abs(stop_lo - lower) > 0.0005 or abs(stop_hi - upper) > 0.0005:
        out["stop_note"] = "(Wald's, moved in by the overshoot correction: the test stops here)"
    else:
        out["stop_note"] = "(Wald's: no overshoot correction yet)"
    if not all(k in out for k in ("nelo", "nelo_ci", "los")):
        est = sprt.estimate([int(c) for c in out.get("pentanomial") or [0] * 5])
        out.setdefault("nelo", est.nelo)
        out.setdefault("nelo_ci", [est.nelo - est.nelo_half, est.nelo + est.nelo_half])
        out.setdefault("los", est.los)
    return out


def single_game(record: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The data of a report that is only a viewer, for one record (``replay --html``)."""
    players = list(record.get("players", []))
    key = name
    return {
        "format": FORMAT,
        "title": name,
        "single": key,
        "bots": players,
        "embedded": {key: slim_record(record)},
        "files": {},
        "results": [],
        "presets": {k: dict(v) for k, v in PRESETS.items()},
        "records_dir": RECORDS_DIR,
    }
