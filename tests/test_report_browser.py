"""The report in a real browser: Debian's chromium, headless, driven by Playwright.

One browser for the whole module. Every page fails its test on a console
error, an uncaught exception, or any request that is not the page's own
file (``file:``) or inline data (``data:``): the report must work offline.
Screenshots of the leaderboard, the heatmap and the viewer go to
``out/screenshots/`` (gitignored; copies live in docs/img/).
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, Route, sync_playwright
from report_stores import mixed_size_store, play, round_robin_store
from skyjo_bot import Action, Bot, View
from skyjo_bot.types import TimeControl
from skyjo_ref.bots import make_builtin
from skyjo_ref.execution.types import PlayedGame
from skyjo_ref.match import GameSetup, InProcessSeat, play_game
from skyjo_ref.records import save
from skyjo_ref.report import ReportOptions, collect, render, write_game, write_report
from skyjo_ref.stats import sprt
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import Store

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "out" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DASH = " \N{EN DASH} "  # between the ends of an interval, as the page writes them
NONE = "\N{EM DASH}"  # a number the page does not have (no interval: a bot of one duplicate block)


class Raises(Bot):
    """Raises on every third decision: the referee strikes it (illegal) and plays for it."""

    def __init__(self) -> None:
        self.calls = 0

    def decide(self, view: View) -> Action:
        self.calls += 1
        if self.calls % 3 == 0:
            raise ValueError("no idea what to do")
        return view.legal_actions[0]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=110
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed: run scripts/install-test-deps")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real small tournament (built-in bots, through the CLI and the in-process referee), and its report."""
    folder = tmp_path_factory.mktemp("league")
    (folder / "league.yaml").write_text(
        textwrap.dedent(
            """\
            name: browser-league
            rules: {preset: official, end_score: 70}
            players_per_game: 2
            deals: 2
            seed: 11
            concurrency: 2
            time_control: {decision_ms: 5000, grace_ms: 5000}
            rating: {anchor: random, elo: 1000, bootstrap: 40}
            output: out
            bots:
              - {name: greedy, builtin: greedy}
              - {name: random, builtin: random}
              - {name: cautious, builtin: greedy}
            """
        ),
        encoding="utf-8",
    )
    played = cli("tournament", "league.yaml", "--plain", cwd=folder)
    assert played.returncode == 0, played.stderr
    made = cli("report", "out", cwd=folder)
    assert made.returncode == 0, made.stderr
    return folder / "out"


class Watch:
    """What a page did that an offline report must not: console errors, page errors, network requests."""

    def __init__(self, page: Page, allowed: tuple[str, ...] = ()) -> None:
        self.allowed = ("file:", "data:", *allowed)
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.route("**/*", self._route)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")

    def _route(self, route: Route, request: Request) -> None:
        if request.url.startswith(self.allowed):
            route.continue_()
            return
        self.requests.append(request.url)
        route.abort()

    def check(self) -> None:
        assert self.errors == []
        assert self.requests == []


def open_page(browser: Browser, path: Path, width: int = 1300) -> tuple[Page, Watch]:
    page = browser.new_page(viewport={"width": width, "height": 900})
    watch = Watch(page)
    page.goto(path.as_uri())
    page.add_style_tag(content="nav { position: static; }")  # element screenshots without the sticky bar
    return page, watch


def final_totals(page: Page) -> list[int]:
    return [int(v) for v in page.locator("#final-totals [data-total]").evaluate_all("e => e.map(x => x.dataset.total)")]


def test_leaderboard_equals_ratings_json_offline(browser: Browser, run: Path) -> None:
    page, watch = open_page(browser, run / "report.html")
    expected = json.loads(cli("ratings", str(run), "--json", "-", cwd=run.parent).stdout)
    rows = page.locator("#leaderboard-table tbody tr")
    assert rows.count() == len(expected["bots"])
    for i, bot in enumerate(expected["bots"]):
        row = rows.nth(i)
        assert row.get_attribute("data-bot") == bot["name"]
        cell = row.locator('[data-col="elo"]')
        assert float(cell.get_attribute("data-value") or "nan") == bot["elo"]
        assert abs(float(cell.inner_text()) - bot["elo"]) <= 0.05
        interval = row.locator('[data-col="interval"]')
        if bot["elo_low"] is None:  # too few games for an interval (null in --json): no number on the page either
            assert interval.get_attribute("data-low") is None and not any(c.isdigit() for c in interval.inner_text())
        else:
            assert float(interval.get_attribute("data-low") or "nan") == bot["elo_low"]
            assert float(interval.get_attribute("data-high") or "nan") == bot["elo_high"]
        assert float(row.locator('[data-col="wins"]').get_attribute("data-value") or "nan") == bot["wins"]
        for column in ("games", "strikes", "forfeits"):
            assert int(row.locator(f'[data-col="{column}"]').inner_text()) == bot[column]
        average = row.locator('[data-col="avg_total"]')
        assert float(average.get_attribute("data-value") or "nan") == bot["avg_total"]
        assert abs(float(average.inner_text()) - bot["avg_total"]) <= 0.05  # shown to one decimal
    # sortable: by games played, then back
    page.click('#leaderboard-table th[data-col="avg_total"]')
    shown = [float(t) for t in page.locator('#leaderboard-table td[data-col="avg_total"]').all_inner_texts()]
    assert shown == sorted(shown)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#leaderboard").screenshot(path=str(SHOTS / "leaderboard.png"))
    watch.check()
    page.close()


def test_a_heatmap_cell_opens_one_of_its_games_and_the_viewer_steps_to_the_final_totals(
    browser: Browser, run: Path
) -> None:
    page, watch = open_page(browser, run / "report.html")
    cell = page.locator('#h2h-grid td.cell[data-row="greedy"][data-col="random"]')
    assert "greedy vs random" in (cell.get_attribute("title") or "")
    cell.click()
    head = page.locator("#viewer-body .viewer-head b").inner_text()
    assert set(head.split("/")[0].split("+")) == {"greedy", "random"}
    record = json.loads(
        next((run / "games").glob(head.replace("/", "__d", 1).replace("/", "_r") + ".json")).read_text()
    )
    # keyboard: → and ← step one action, ↓ a round, End the end
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert page.locator("#v-where").inner_text().startswith("round 1/")
    assert ", action 2/" in page.locator("#v-where").inner_text()
    assert page.locator(".legal-action.chosen").count() == 1
    rounds = len(record["rounds"])
    page.keyboard.press("Home")
    for _ in range(rounds - 1):
        page.keyboard.press("ArrowDown")
    assert page.locator("#v-where").inner_text().startswith(f"round {rounds}/{rounds}, action 0/")
    assert page.locator("#final-totals").count() == 0
    for _ in range(len(record["rounds"][-1]["actions"])):
        page.keyboard.press("ArrowRight")
    assert final_totals(page) == record["result"]["totals"]
    page.keyboard.press("Home")
    assert page.locator("#final-totals").count() == 0
    page.click("#v-last")
    assert final_totals(page) == record["result"]["totals"]
    page.click("#v-prev")
    page.click("#v-next")
    page.locator("#viewer").screenshot(path=str(SHOTS / "viewer.png"))
    watch.check()
    page.close()


def test_a_game_the_page_does_not_carry_opens_from_the_games_folder(
    browser: Browser, run: Path, tmp_path: Path
) -> None:
    """From disk the browser may not read games/*.json by itself: the page asks for the file, then shows it."""
    out = run / "slim.html"
    data = write_report(run, out, ReportOptions(record_budget=0, bootstrap=0))
    assert data["embedded"] == {}
    page, watch = open_page(browser, out)
    row = page.locator("#games-list tr[data-game]").first
    key = row.get_attribute("data-game") or ""
    row.locator("button.open").click()
    picker = page.locator("#record-file")
    picker.wait_for()
    path = run / "games" / data["files"][key]
    picker.set_input_files(str(path))
    page.locator("#v-last").click()
    assert final_totals(page) == json.loads(path.read_text())["result"]["totals"]
    watch.check()
    page.close()


def test_served_over_http_the_page_loads_games_it_does_not_carry_by_itself(browser: Browser, run: Path) -> None:
    data = write_report(run, run / "served.html", ReportOptions(record_budget=0, bootstrap=0))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(run))

    class Quiet(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:  # a closed page is not an error
            pass

    server = Quiet(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        page = browser.new_page()
        watch = Watch(page, allowed=(origin,))
        page.goto(f"{origin}/served.html")
        row = page.locator("#games-list tr[data-game]").first
        key = row.get_attribute("data-game") or ""
        row.locator("button.open").click()
        page.locator("#v-last").click()  # waits for the record to arrive
        record = json.loads((run / "games" / data["files"][key]).read_text())
        assert final_totals(page) == record["result"]["totals"]
        assert page.locator("#record-file").count() == 0
        watch.check()
        page.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_gate_section_draws_llr_bounds_pentanomial_and_verdict(browser: Browser, run: Path, tmp_path: Path) -> None:
    gate_run = tmp_path / "gate"
    shutil.copytree(run, gate_run)
    history = [[20, 0.4], [40, 1.2], [60, 2.1], [80, 3.05]]
    with Store(gate_run, create=False) as store:
        store.set_info(
            "gate",
            {
                "candidate": "greedy",
                "baseline": "random",
                "elo0": 0,
                "elo1": 10,
                "alpha": 0.05,
                "beta": 0.05,
                "bounds": [-2.94, 2.94],
                "llr": 3.05,
                "pentanomial": [1, 4, 10, 15, 10],
                "games": 80,
                "elo": 84.2,
                "elo_ci": [40.5, 130.0],
                "verdict": "accepted",
                "history": history,
            },
        )
    made = cli("report", str(gate_run), "-o", str(tmp_path / "gate.html"), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    page, watch = open_page(browser, tmp_path / "gate.html")
    assert page.locator("#gate .verdict").get_attribute("data-verdict") == "accepted"
    assert "greedy vs random: accepted" in page.locator("#gate .verdict").inner_text()
    verdict_y = page.locator("#gate .verdict").bounding_box()
    assert verdict_y is not None and verdict_y["y"] < 400  # the verdict first, above the leaderboard
    assert page.locator("nav a").first.get_attribute("href") == "#gate"
    assert len((page.locator("#gate polyline.llr").get_attribute("points") or "").split()) == len(history)
    assert page.locator("#gate line.bound").count() == 2
    assert page.locator("#gate rect.penta").count() == 5
    facts = page.locator("#gate-facts").inner_text()
    assert "3.050 after 80 games; Wald's bounds [-2.940, 2.940]" in facts
    # what an older gate did not store is computed with the gate's own functions, as the command line prints it
    o0, o1 = sprt.overshoot([v for _, v in history])
    assert f"stop bounds\t[{-2.94 + o0:.3f}, {2.94 - o1:.3f}] (Wald's, moved in by the overshoot correction" in facts
    est = sprt.estimate([1, 4, 10, 15, 10])
    low, high = est.nelo - est.nelo_half, est.nelo + est.nelo_half
    assert f"normalized Elo\t{est.nelo:.1f} (95%: {low:.1f}{DASH}{high:.1f})" in facts
    assert f"LOS\t{100 * est.los:.1f}%" in facts
    assert o0 == 0 < o1  # the LLR only rose: only the upper bound moved in, and only it is drawn twice
    assert page.locator("#gate line.stop-bound.accept").count() == 1
    assert page.locator("#gate line.stop-bound.reject").count() == 0
    watch.check()
    page.close()
    # without JavaScript the verdict and the numbers are still there
    context = browser.new_context(java_script_enabled=False)
    bare = context.new_page()
    bare.goto((tmp_path / "gate.html").as_uri())
    assert bare.locator("#gate .verdict").inner_text() == "greedy vs random: accepted"
    assert f"LOS\t{100 * est.los:.1f}%" in bare.locator("#gate-facts").inner_text()
    context.close()
    # a report without a gate has no gate section
    plain, watch = open_page(browser, run / "report.html")
    assert plain.locator("#gate").count() == 0
    watch.check()
    plain.close()


def test_a_k_player_gate_shows_its_table_and_block_scores_not_a_pentanomial(
    browser: Browser, run: Path, tmp_path: Path
) -> None:
    gate_run = tmp_path / "gate3"
    shutil.copytree(run, gate_run)
    with Store(gate_run, create=False) as store:
        store.set_info(
            "gate",
            {
                "candidate": "greedy",
                "baseline": "random",
                "elo0": 0,
                "elo1": 20,
                "alpha": 0.05,
                "beta": 0.05,
                "bounds": [-2.94, 2.94],
                "stop_bounds": [-2.94, 2.94],
                "llr": -3.0,
                "players": 3,
                "field": None,
                "seating": "rotations",
                "block_games": 3,
                "pentanomial": None,
                "block_scores": [2, 5, 9, 3, 1],
                "games": 60,
                "elo": -12.0,
                "elo_ci": [-40.0, 16.0],
                "nelo": -20.0,
                "nelo_ci": [-60.0, 20.0],
                "los": 0.2,
                "verdict": "rejected",
                "history": [[30, -1.0], [60, -3.0]],
            },
        )
    made = cli("report", str(gate_run), "-o", str(tmp_path / "gate3.html"), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    page, watch = open_page(browser, tmp_path / "gate3.html")
    facts = page.locator("#gate-facts").inner_text()
    assert "3 players: greedy and 2 copies of random, the candidate in each seat (3 games a deal" in facts
    assert "block scores\t2, 5, 9, 3, 1 (deals scoring 0" in facts and "pentanomial" not in facts
    bars = page.locator("#gate rect.penta")
    assert bars.count() == 5
    assert page.locator("#gate svg[aria-label^='block scores']").count() == 1
    watch.check()
    page.close()


def many_bots(count: int) -> list[str]:
    return [f"{'greedy' if i % 3 == 0 else 'random'}-{i:02d}{'-long-name' * (i % 4)}" for i in range(count)]


@functools.cache
def many_report(count: int, folder: Path) -> Path:
    """The report of a round robin of ``count`` bots (long names too), made once per module."""
    round_robin_store(folder / f"many-{count}", many_bots(count), deals=1, pool=1).close()
    write_report(folder / f"many-{count}", folder / f"many-{count}.html", ReportOptions(bootstrap=0))
    return folder / f"many-{count}.html"


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], Path]:
    folder = tmp_path_factory.mktemp("many")
    return lambda count: many_report(count, folder)


def test_forty_bots_heatmap_scrolls_and_stays_readable(browser: Browser, many: Callable[[int], Path]) -> None:
    bots = many_bots(40)
    page, watch = open_page(browser, many(40), width=1100)
    grid = page.locator("#h2h-grid")
    assert page.locator("#h2h-grid td.cell").count() == 40 * 39
    box = grid.bounding_box()
    assert box is not None and box["width"] <= 1100  # the heatmap scrolls inside its box, not the page
    labels = page.locator("#h2h-grid th.row-label")
    sizes = labels.evaluate_all("e => e.map(x => parseFloat(getComputedStyle(x).fontSize))")
    assert min(sizes) >= 10
    tops = [b["y"] for b in (labels.nth(i).bounding_box() for i in range(40)) if b is not None]
    assert all(b - a >= 12 for a, b in itertools.pairwise(tops))  # rows do not overlap
    # the column names stay in sight while the grid scrolls down inside its box
    top = page.locator("#h2h-grid th.col-label").first
    before = top.bounding_box()
    grid.evaluate("g => { g.scrollTop = 400; }")
    page.wait_for_function("document.getElementById('h2h-grid').scrollTop >= 400")
    after = top.bounding_box()
    assert before and after and abs(after["y"] - before["y"]) < 1
    assert page.locator("#h2h-grid tbody th.row-label").first.bounding_box()["y"] < before["y"]  # type: ignore[index]
    last = page.locator(f'#h2h-grid td.cell[data-row="{bots[-1]}"][data-col="{bots[-2]}"]')
    last.click()  # scrolled into view by the click, as a user would scroll
    head = page.locator("#viewer-body .viewer-head b").inner_text()
    assert set(head.split("/")[0].split("+")) == {bots[-1], bots[-2]}
    page.locator("#h2h").screenshot(path=str(SHOTS / "heatmap-40.png"))
    watch.check()
    page.close()


def test_replay_html_writes_the_viewer_for_one_record(browser: Browser, run: Path, tmp_path: Path) -> None:
    path = sorted((run / "games").glob("*.json"))[0]
    record: dict[str, Any] = json.loads(path.read_text())
    made = cli("replay", "--html", str(path), "-o", str(tmp_path / "one.html"), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    page, watch = open_page(browser, tmp_path / "one.html")
    assert page.locator("#leaderboard").count() == 0
    page.keyboard.press("End")
    assert final_totals(page) == record["result"]["totals"]
    watch.check()
    page.close()


def test_the_viewer_marks_strikes_and_the_referees_actions(browser: Browser, tmp_path: Path) -> None:
    seats = [InProcessSeat(Raises(), "shaky"), InProcessSeat(make_builtin("greedy", 1), "greedy")]
    tc = TimeControl(decision_ms=5000, bank_ms=600_000, max_strikes=1000, grace_ms=1000)
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
        record = pool.submit(asyncio.run, play_game(GameSetup("g", seats, seed="3", time_control=tc))).result()
    save(record, tmp_path / "shaky.json")
    made = cli("replay", "--html", "shaky.json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    page, watch = open_page(browser, tmp_path / "shaky.html")
    first = record["meta"]["strikes"][0]
    for _ in range(first["round"]):
        page.keyboard.press("ArrowDown")
    for _ in range(first["action"]):
        page.keyboard.press("ArrowRight")
    assert "played by the referee: illegal" in page.locator(".decision").inner_text()
    page.keyboard.press("ArrowRight")
    assert page.locator('.seat[data-seat="0"] .mark.strike').inner_text() == "1 strike"
    assert "no idea what to do" in (page.locator('.seat[data-seat="0"] .mark.strike').get_attribute("title") or "")
    page.keyboard.press("End")
    strikes = len(record["meta"]["strikes"])
    assert page.locator('.seat[data-seat="0"] .mark.strike').inner_text() == f"{strikes} strikes"
    assert final_totals(page) == record["result"]["totals"]
    watch.check()
    page.close()


# --------------------------------------------------------------------------------- issue 22: what people see


class Quits(Bot):
    """Answers wrong once in the first round, then every time: strikes in round 1, a forfeit in round 2."""

    def __init__(self) -> None:
        self.calls = 0

    def decide(self, view: View) -> Action:
        self.calls += 1
        if (view.round == 0 and self.calls == 5) or view.round >= 1:
            raise ValueError("gave up")
        return view.legal_actions[0]


@pytest.fixture(scope="module")
def faults_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A round robin of 66 games (more than a page of the games list) and one game a bot forfeits in round 2."""
    folder = tmp_path_factory.mktemp("faults")
    bots = ["greedy", "quits", "random-a", "random-b", "random-c", "random-d"]
    store = round_robin_store(folder, bots, deals=2, pool=1)
    seats = [InProcessSeat(Quits(), "quits"), InProcessSeat(make_builtin("greedy", 1), "greedy")]
    tc = TimeControl(decision_ms=5000, bank_ms=600_000, max_strikes=3, grace_ms=1000)
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
        record = pool.submit(asyncio.run, play_game(GameSetup("g", seats, seed="7", time_control=tc))).result()
    assert record["meta"]["forfeited"][0]["round"] == 1  # the second round
    store.add_game(GameId(("greedy", "quits"), 9, 1), "s", record, 0.1)
    store.close()
    write_report(folder, folder / "report.html", ReportOptions(bootstrap=0))
    write_game(record, "quits", folder / "quits.html")  # what replay --html writes (its CLI is tested above)
    return folder, record


def position(page: Page) -> int:
    return int(page.evaluate("() => Number(document.getElementById('v-timeline').value)"))


def test_without_javascript_the_leaderboard_is_a_plain_table(browser: Browser, run: Path) -> None:
    expected = json.loads(cli("ratings", str(run), "--json", "-", cwd=run.parent).stdout)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto((run / "report.html").as_uri())
    assert "JavaScript is off" in page.locator("noscript").first.inner_text() or page.locator(".noscript").is_visible()
    rows = page.locator("#leaderboard-table tbody tr")
    assert rows.count() == len(expected["bots"])
    for i, bot in enumerate(expected["bots"]):
        row = rows.nth(i)
        assert row.locator('[data-col="name"]').inner_text() == bot["name"]
        assert row.locator('[data-col="elo"]').inner_text() == f"{bot['elo']:.1f}"
        shown = row.locator('[data-col="interval"]').inner_text()
        if bot["elo_low"] is None:  # too few games for an interval (null in --json): no number in the plain table
            assert not any(c.isdigit() for c in shown), shown
        else:
            assert shown == f"{bot['elo_low']:.0f}{DASH}{bot['elo_high']:.0f}"
        assert int(row.locator('[data-col="games"]').inner_text()) == bot["games"]
    context.close()
    # with JavaScript the same table becomes sortable, and the note is not shown
    page, watch = open_page(browser, run / "report.html")
    assert not page.locator(".noscript").is_visible()
    assert page.locator("#leaderboard-table").get_attribute("data-static") is None
    watch.check()
    page.close()


def test_the_games_list_shows_winner_forfeits_strikes_sorts_and_pages(
    browser: Browser, faults_run: tuple[Path, dict[str, Any]]
) -> None:
    folder, record = faults_run
    page, watch = open_page(browser, folder / "report.html", width=1400)
    listing = page.locator("#games-table")
    assert listing.locator("tbody tr").count() == 50
    assert "page 1 of 2 · 61 games" in listing.locator(".page-of").first.inner_text()
    listing.locator("button.next").first.click()
    assert listing.locator("tbody tr").count() == 11  # not capped: every game is listed, a page at a time
    listing.locator('th[data-sort="strikes"]').click()  # ascending, then descending
    listing.locator('th[data-sort="strikes"]').click()
    first = listing.locator("tbody tr").first
    assert first.get_attribute("data-game") == "greedy+quits/9/1"
    assert first.locator("td.forfeits").inner_text() == "quits"
    assert first.locator("td.winner").inner_text() == "greedy"
    assert first.locator("td.strikes").inner_text() == f"quits {len(record['meta']['strikes'])}"
    assert "(forfeit)" in first.locator(".seat-result.forfeited").inner_text()
    # the table stays inside its card: the page is no wider than the window
    section = page.locator("#games").bounding_box()
    table = listing.locator(".scroll").bounding_box()
    assert section and table and table["x"] + table["width"] <= section["x"] + section["width"] + 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    watch.check()
    page.close()


@pytest.fixture(scope="module")
def four_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 4-player league (the CLI, built-in bots with long names): the widest games list."""
    folder = tmp_path_factory.mktemp("four")
    names = [f"{kind}-{i}-with-a-rather-long-name" for i, kind in enumerate(["greedy", "random"] * 2)]
    bots = "".join(f"  - {{name: {n}, builtin: {n.split('-')[0]}}}\n" for n in names)
    (folder / "league.yaml").write_text(
        "name: four\nrules: {preset: official, end_score: 40}\nplayers_per_game: 4\ndeals: 1\nseed: 3\n"
        f"concurrency: 2\nrating: {{bootstrap: 0}}\noutput: out\nbots:\n{bots}",
        encoding="utf-8",
    )
    played = cli("tournament", "league.yaml", "--plain", cwd=folder)
    assert played.returncode == 0, played.stderr
    made = cli("report", "out", cwd=folder)
    assert made.returncode == 0, made.stderr
    return folder / "out" / "report.html"


@pytest.mark.parametrize("which", ["report", "single", "four"])
def test_at_phone_width_nothing_is_wider_than_the_screen(
    browser: Browser, faults_run: tuple[Path, dict[str, Any]], four_run: Path, which: str
) -> None:
    folder, _ = faults_run
    path = {"report": folder / "report.html", "single": folder / "quits.html", "four": four_run}[which]
    page = browser.new_page(viewport={"width": 390, "height": 844})
    watch = Watch(page)
    page.goto(path.as_uri())
    if which == "four":  # a real league's store has its rules: opened, they wrap too
        page.locator("header details.rules summary").click()
        assert "end_score: 40" in page.locator("header details.rules").inner_text()
    if which != "single":
        elo = page.locator("#leaderboard-table tbody tr").first.locator('[data-col="elo"]').bounding_box()
        assert elo and elo["x"] + elo["width"] <= 390  # Elo on the first screen
        ticks = page.locator("#history-chart text.ytick")
        heights = ticks.evaluate_all("e => e.map(t => t.getBoundingClientRect().height)")
        assert heights and min(heights) >= 10  # axis text at its real size, not shrunk
        page.locator("#games-table tr[data-game]").first.locator("button.open").click()
    page.locator("#v-last").click()
    assert page.locator("#final-totals").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    if which == "four":  # and at a laptop's width, the 4-player games list stays inside its card
        page.set_viewport_size({"width": 1400, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    SHOTS.mkdir(parents=True, exist_ok=True)
    if which == "report":
        page.screenshot(path=str(SHOTS / "phone.png"))
    watch.check()
    page.close()


def test_rounds_count_from_one_and_a_fault_opens_its_game_at_the_faulty_step(
    browser: Browser, faults_run: tuple[Path, dict[str, Any]]
) -> None:
    folder, record = faults_run
    page, watch = open_page(browser, folder / "report.html")
    page.select_option("#bot-select", "quits")
    strike = record["meta"]["strikes"][0]
    row = page.locator("table.faults tbody tr").first
    assert row.locator('[data-col="round"]').inner_text() == str(strike["round"] + 1)
    row.locator("a.fault-link").click()
    where = page.locator("#v-where").inner_text()
    assert where == f"round {strike['round'] + 1}/{len(record['rounds'])}, action {strike['action']}/" + str(
        len(record["rounds"][strike["round"]]["actions"])
    )
    assert "played by the referee: illegal" in page.locator(".decision").inner_text()
    # the end of the first round says "round 1", and its scores by name
    page.keyboard.press("Home")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowLeft")
    assert page.locator("#v-where").inner_text().startswith(f"round 1/{len(record['rounds'])}, over")
    scores = record["rounds"][0]["result"]["scores"]
    names = record["players"]
    assert page.locator("#round-over").inner_text() == (
        f"Round 1 over: {names[record['rounds'][0]['result']['finisher']]} ended it; round scores "
        + ", ".join(f"{n} {v}" for n, v in zip(names, scores))
        + "."
    )
    watch.check()
    page.close()


def test_the_forfeit_badge_shows_from_the_forfeit_on(
    browser: Browser, faults_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    folder, record = faults_run
    page, watch = open_page(browser, folder / "quits.html")
    forfeit = record["meta"]["forfeited"][0]
    badge = page.locator(f'.seat[data-seat="{forfeit["seat"]}"] .mark.forfeit')
    assert badge.count() == 0  # at the start: nothing forfeited yet
    page.keyboard.press("ArrowDown")  # round 2, before its first action
    for _ in range(forfeit["action"] - 1):
        page.keyboard.press("ArrowRight")
    assert badge.count() == 0
    page.keyboard.press("ArrowRight")
    assert badge.count() == 1
    page.keyboard.press("End")
    assert badge.count() == 1
    reason = forfeit["reason"].split(" (")[0].split(": ")[0]
    assert badge.inner_text().startswith("forfeit: ") and reason[:30] in badge.inner_text()  # it says why
    watch.check()
    page.close()


def test_keys_step_the_viewer_only_while_it_has_focus(browser: Browser, run: Path) -> None:
    page, watch = open_page(browser, run / "report.html", width=1300)
    page.locator("#games-table tr[data-game]").first.locator("button.open").click()
    page.keyboard.press("ArrowRight")
    assert position(page) == 1  # opening a game gives the viewer focus
    page.locator("#leaderboard h2").click()  # elsewhere on the page: keys scroll, the viewer stays
    page.evaluate("window.scrollTo(0, 0)")
    page.keyboard.press("PageDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    assert position(page) == 1
    page.wait_for_function("window.scrollY > 0")
    page.locator("#viewer h2").click()
    page.keyboard.press("ArrowRight")
    assert position(page) == 2
    # the address names the game (its key URL-encoded: it holds + and /) and the step; reloaded, it opens there
    key = page.locator("#viewer-body .viewer-head b").inner_text()
    assert page.evaluate("location.hash") == f"#game={quote(key, safe='')}&step=2"
    page.reload()
    assert page.locator("#viewer-body .viewer-head b").inner_text() == key
    assert position(page) == 2
    watch.check()
    page.close()


def test_heatmap_cells_are_neutral_at_half_readable_and_carry_score_and_games(
    browser: Browser, run: Path, tmp_path: Path
) -> None:
    data = collect(run, ReportOptions(bootstrap=0))
    data["h2h"][0][1] = [8, 3, 2, 3, 1.0]  # exactly 50%: 4/8
    data["h2h"][1][0] = [8, 3, 2, 3, 1.0]
    (tmp_path / "h.html").write_text(render(data), encoding="utf-8")
    page, watch = open_page(browser, tmp_path / "h.html")
    a, b = data["bots"][0], data["bots"][1]
    for row, col in ((a, b), (b, a)):
        cell = page.locator(f'#h2h-grid td.cell[data-row="{row}"][data-col="{col}"]')
        assert "level" in (cell.get_attribute("class") or "")
        assert cell.locator(".sc").inner_text() == "4/8"
    cells = page.locator("#h2h-grid td.cell").evaluate_all(
        """e => e.map(c => ({score: c.dataset.score, bg: getComputedStyle(c).backgroundColor,
                            fg: getComputedStyle(c).color, text: c.querySelector('.sc').textContent,
                            level: c.classList.contains('level'), row: c.dataset.row, col: c.dataset.col}))"""
    )

    def rgb(text: str) -> tuple[int, ...]:
        return tuple(int(v) for v in text[text.index("(") + 1 : text.index(")")].split(",")[:3])

    def lum(c: tuple[int, ...]) -> float:
        lin = [(v / 255 / 12.92) if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    for cell in cells:
        hi, lo = sorted((lum(rgb(cell["bg"])), lum(rgb(cell["fg"]))), reverse=True)
        assert (hi + 0.05) / (lo + 0.05) >= 4.5, cell
        i, j = data["bots"].index(cell["row"]), data["bots"].index(cell["col"])
        games, won, drawn = data["h2h"][i][j][:3]
        points = won + drawn / 2
        assert cell["text"] == f"{points:g}/{games}"
        red, _, blue = rgb(cell["bg"])
        if not cell["level"]:  # blue ahead, orange behind: told apart without red and green
            assert (blue > red) == (points > games / 2), cell
    watch.check()
    page.close()


def test_per_bot_results_against_each_opponent(browser: Browser, run: Path) -> None:
    data = collect(run, ReportOptions(bootstrap=0))
    page, watch = open_page(browser, run / "report.html")
    name = data["bots"][0]
    page.select_option("#bot-select", name)
    rows = page.locator("#opponents tbody tr")
    assert rows.count() == len(data["bots"]) - 1
    for j, other in enumerate(data["bots"]):
        cell = data["h2h"][0][j]
        if cell is None:
            continue
        row = page.locator(f'#opponents tr[data-opponent="{other}"]')
        assert row.locator('[data-col="score"]').inner_text() == f"{cell[1] + cell[2] / 2:g}/{cell[0]}"
    watch.check()
    page.close()


def test_the_viewer_plays_scrubs_links_turns_cards_up_and_charts_the_rounds(
    browser: Browser, faults_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    folder, record = faults_run
    page, watch = open_page(browser, folder / "quits.html")
    n = len(record["players"])
    # all cards face up: the record's deck shows under the face-down cards
    assert page.locator(".card.hidden:not(.pile)").count() == 12 * n
    page.check("#v-faceup")
    peeks = page.locator(".seat .card.peek").all_inner_texts()
    assert [int(v) for v in peeks] == record["rounds"][0]["deck"][: 12 * n]
    page.uncheck("#v-faceup")
    # play, then pause: the position moves by itself, and stops
    page.select_option("#v-speed", "16")
    page.click("#v-play")
    page.wait_for_function("Number(document.getElementById('v-timeline').value) >= 3")
    page.click("#v-play")
    assert page.evaluate("window.skyjoReport.view.timer") is None
    # the timeline: drag to a step; the address bar follows; a link opens that step
    page.locator("#v-timeline").fill("30")
    assert position(page) == 30
    url = page.evaluate("location.href")
    assert url.endswith("#game=quits&step=30")
    showing = page.locator(".seat .showing").evaluate_all("e => e.map(x => Number(x.dataset.showing))")
    grids = page.locator(".seat .grid").evaluate_all(
        "g => g.map(x => [...x.children]"
        ".filter(c => !c.classList.contains('hidden') && !c.classList.contains('removed'))"
        ".reduce((s, c) => s + Number(c.textContent), 0))"
    )
    assert showing == grids  # each seat's running visible total
    again = browser.new_page()
    again.goto(url)
    assert position(again) == 30
    again.close()
    # the per-round chart and table: a line per seat, the record's totals at the end
    page.keyboard.press("End")
    assert page.locator("#score-chart polyline").count() == n
    last = page.locator("table.round-scores tbody tr td:last-child").all_inner_texts()
    assert [int(v) for v in last] == record["result"]["totals"]
    watch.check()
    page.close()


@pytest.mark.parametrize("count", [20, 40])
def test_rating_history_keeps_many_bots_apart_labelled_and_pickable(
    browser: Browser, many: Callable[[int], Path], count: int
) -> None:
    bots = many_bots(count)
    page, watch = open_page(browser, many(count), width=1400)
    chart = page.locator("#history-chart svg")
    strokes = chart.locator("polyline.series").evaluate_all("e => e.map(x => x.getAttribute('stroke'))")
    assert len(strokes) == count and len(set(strokes)) == count  # every line its own colour
    ticks = [float(t) for t in chart.locator("text.ytick").all_text_contents()]
    step = ticks[1] - ticks[0]
    assert step > 0 and all(abs(v / step - round(v / step)) < 1e-9 for v in ticks)  # round values
    assert f"{step:g}".lstrip("0.")[0] in "125"

    def inside() -> None:
        box = chart.bounding_box()  # taken anew: a click may have scrolled the page
        for label in chart.locator("text.label").all():
            b = label.bounding_box()
            assert b and box and b["y"] >= box["y"] and b["y"] + b["height"] <= box["y"] + box["height"] + 1
            assert b["x"] + b["width"] <= box["x"] + box["width"] + 1, label.text_content()  # names not clipped

    labels = chart.locator("text.label")
    if count <= 20:
        assert labels.count() == count
        inside()
    else:
        assert labels.count() == 0  # too many to label: the legend names them, a click picks one
    assert page.locator("#history-legend .chip").count() == count
    page.locator(f'#history-legend .chip[data-bot="{bots[-1]}"]').click()
    assert page.locator(f'#history-chart polyline.picked[data-bot="{bots[-1]}"]').count() == 1
    assert page.locator("#history-chart polyline.faded").count() == count - 1
    assert page.locator(f'#history-chart text.label[data-bot="{bots[-1]}"]').count() == 1
    inside()
    watch.check()
    page.close()


def test_histograms_keep_their_labels_whole_and_apart(browser: Browser, tmp_path: Path) -> None:
    bots = ["greedy", "random"]
    round_robin_store(tmp_path / "two", bots, deals=200, pool=2).close()
    data = write_report(tmp_path / "two", tmp_path / "two.html", ReportOptions(bootstrap=0))
    page, watch = open_page(browser, tmp_path / "two.html")
    decisions = data["per_bot"]["greedy"]["decisions"]
    assert max(decisions["bins"]) > 10_000  # the top label reads like 10.2k, not ".0157"
    charts = page.locator("#bot-detail svg.chart")
    assert charts.count() == 2
    for k in range(2):
        chart = charts.nth(k)
        box = chart.bounding_box()
        assert box is not None
        for tick in chart.locator("text.ytick").all():
            b = tick.bounding_box()
            assert b and b["x"] >= box["x"]  # not cut at the left edge
        xs = [b for b in (t.bounding_box() for t in chart.locator("text.xtick").all()) if b]
        assert all(a["x"] + a["width"] <= c["x"] for a, c in itertools.pairwise(xs))  # no overlap
        ys = sorted(b["y"] for b in (t.bounding_box() for t in chart.locator("text.ytick").all()) if b)
        assert len(ys) >= 2 and all(c - a >= 10 for a, c in itertools.pairwise(ys))
    top = charts.nth(1).locator("text.ytick").first.text_content()
    assert top == f"{max(decisions['bins']) / 1000:.1f}k"
    # a log scale: a bin of a few slow decisions is still a visible bar
    heights = charts.nth(1).locator("rect").evaluate_all("e => e.map(r => Number(r.getAttribute('height')))")
    assert all(h >= 5 for h, c in zip(heights, decisions["bins"]) if c > 0)
    watch.check()
    page.close()


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A league at 2, 3 and 4 players (Plackett-Luce, anchored), and a bot that played one duplicate block."""
    folder = tmp_path_factory.mktemp("mixed") / "run"
    rating = {"anchor": "random", "elo": 1000, "bootstrap": 20, "interval_seed": 3, "model": "plackett-luce"}
    bots = ["greedy", "greedy2", "random", "random2"]
    store = mixed_size_store(folder, bots, [2, 3, 4], deals=2, rating={**rating, "interval": "normal"})
    late = [GameId(("greedy", "late"), 0, r) for r in range(2)]
    store.add_games([PlayedGame(g, "2/0", play(g.seats, "2/0", ["greedy", "random"]), 0.01) for g in late])
    store.close()
    write_report(folder, folder / "report.html")
    return folder


def test_table_sizes_seats_and_starters_show_the_numbers_of_ratings_json(browser: Browser, mixed_run: Path) -> None:
    expected = json.loads(cli("ratings", str(mixed_run), "--json", "-", cwd=mixed_run.parent).stdout)
    page, watch = open_page(browser, mixed_run / "report.html")
    assert "Plackett-Luce Elo" in page.locator("#leaderboard .note").first.inner_text()
    late = page.locator('#leaderboard-table tr[data-bot="late"] [data-col="interval"]')
    assert late.inner_text() == NONE and late.get_attribute("data-low") is None  # JavaScript drew it: no NaN
    assert sorted(expected["by_size"]) == ["2", "3", "4"]
    for k, bots in expected["by_size"].items():
        rows = page.locator(f"#size-{k} tbody tr")
        assert rows.count() == len(bots)
        for i, bot in enumerate(bots):
            row = rows.nth(i)
            assert row.get_attribute("data-bot") == bot["name"]
            assert float(row.locator('[data-col="elo"]').get_attribute("data-value") or "nan") == bot["elo"]
            assert row.locator('[data-col="elo"]').inner_text() == f"{bot['elo']:.1f}"
            shown = NONE if bot["elo_low"] is None else f"{bot['elo_low']:.0f}{DASH}{bot['elo_high']:.0f}"
            assert row.locator('[data-col="interval"]').inner_text() == shown
            assert int(row.locator('[data-col="games"]').inner_text()) == bot["games"]
            assert row.locator('[data-col="win_rate"]').inner_text() == f"{100 * bot['win_rate']:.1f}"
            assert row.locator('[data-col="avg_total"]').inner_text() == f"{bot['avg_total']:.1f}"
    assert page.locator('#size-2 tr[data-bot="late"] [data-col="interval"]').inner_text() == NONE
    for k, seats in expected["seat_effects"].items():
        cells = page.locator(f'#seat-effects tr[data-size="{k}"] td[data-seat]')
        assert cells.all_inner_texts() == [f"{100 * s['score']:.1f}%" for s in seats]
    for k, effect in expected["starter_effects"].items():
        row = page.locator(f'#starter-effects tr[data-size="{k}"]')
        assert int(row.locator('[data-col="games"]').inner_text()) == effect["games"]
        assert row.locator('[data-col="points"]').inner_text() == f"{effect['points']:+.1f}"
        assert row.locator('[data-col="share"]').inner_text() == f"{100 * effect['share']:.1f}"
    page.click('nav a[href="#sizes"]')
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#sizes").screenshot(path=str(SHOTS / "table-sizes.png"))
    page.locator("#seats").screenshot(path=str(SHOTS / "seats.png"))
    watch.check()
    page.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_every_navigation_link_scrolls_its_heading_below_the_sticky_bar(
    browser: Browser, run: Path, width: int
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 800})
    watch = Watch(page)
    page.goto((run / "report.html").as_uri())
    links = page.locator("nav a").evaluate_all("e => e.map(a => a.getAttribute('href'))")
    assert len(links) >= 6
    for href in links:
        page.evaluate("window.scrollTo(0, 0)")
        page.locator(f"nav a[href='{href}']").click()
        page.wait_for_function(
            f"Math.abs(document.querySelector('{href}').getBoundingClientRect().top - "
            "document.querySelector('nav').getBoundingClientRect().bottom) < 40 || "
            "window.scrollY + window.innerHeight >= document.body.scrollHeight - 2"
        )
        nav_bottom = page.evaluate("document.querySelector('nav').getBoundingClientRect().bottom")
        heading_top = page.evaluate(f"document.querySelector('{href} h2').getBoundingClientRect().top")
        assert heading_top >= nav_bottom, (href, heading_top, nav_bottom)  # not under the bar
    watch.check()
    page.close()


def test_a_game_address_opens_the_game_in_an_open_tab(browser: Browser, run: Path) -> None:
    page, watch = open_page(browser, run / "report.html")
    key = page.locator("#games-table tr[data-game]").nth(1).get_attribute("data-game")
    assert key
    page.evaluate(f"location.hash = 'game={key}&step=3'")  # typed into the address bar, the key not encoded
    page.wait_for_function(f"document.querySelector('#viewer-body .viewer-head b')?.innerText === {key!r}")
    assert position(page) == 3
    watch.check()
    page.close()


# ------------------------------------------------------------------------- issue 30: what a real browser finds

AXE = ROOT / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="module")
def gate_report(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tournament's store with a gate's result in it, and its report."""
    gate_run = tmp_path_factory.mktemp("gate-axe") / "run"
    shutil.copytree(run, gate_run)
    with Store(gate_run, create=False) as store:
        store.set_info(
            "gate",
            {
                "candidate": "greedy",
                "baseline": "random",
                "elo0": 0,
                "elo1": 10,
                "alpha": 0.05,
                "beta": 0.05,
                "bounds": [-2.94, 2.94],
                "llr": 3.05,
                "pentanomial": [1, 4, 10, 15, 10],
                "games": 80,
                "elo": 84.2,
                "elo_ci": [40.5, 130.0],
                "verdict": "accepted",
                "history": [[20, 0.4], [40, 1.2], [60, 2.1], [80, 3.05]],
            },
        )
    write_report(gate_run, gate_run / "report.html", ReportOptions(bootstrap=0))
    return gate_run / "report.html"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("width", [1400, 390])
def test_axe_core_finds_no_accessibility_violation(
    browser: Browser,
    run: Path,
    mixed_run: Path,
    gate_report: Path,
    many: Callable[[int], Path],
    faults_run: tuple[Path, dict[str, Any]],
    width: int,
) -> None:
    """axe-core (tests/browser, installed by scripts/install-test-deps) on six pages, a game open in the viewer."""
    if not AXE.exists():
        pytest.fail("axe-core is not installed: run scripts/install-test-deps (npm ci in tests/browser)")
    axe = AXE.read_text(encoding="utf-8")
    reports = {
        "tournament 2p": run / "report.html",
        "mixed 2-4p": mixed_run / "report.html",
        "gate": gate_report,
        "40 bots": many(40),
        "faults": faults_run[0] / "report.html",
        "replay --html": faults_run[0] / "quits.html",
    }
    found: dict[str, list[str]] = {}
    for name, path in reports.items():
        page = browser.new_page(viewport={"width": width, "height": 900})
        watch = Watch(page)
        page.goto(path.as_uri())
        if page.locator("#games-table button.open").count():  # a game the page carries
            page.locator("#games-table button.open", has_text="view").first.click()
        page.locator("#v-where").wait_for()
        page.add_script_tag(content=axe)
        # the 40-bot heatmap's 1,560 cells cost axe 15 s a width: their every shade is measured by
        # test_every_heatmap_shade_keeps_its_text_at_4_5_to_1, and the other reports' cells are checked here
        context = "{exclude: [['#h2h-grid td.cell']]}" if name == "40 bots" else "document"
        result = page.evaluate(f"() => axe.run({context}, {{resultTypes: ['violations']}})")
        found[name] = [
            f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]} "
            f"[{len(v['nodes'])} nodes] {v['nodes'][0].get('failureSummary', '')[:200]}"
            for v in result["violations"]
        ]
        watch.check()
        page.close()
    assert not any(found.values()), "\n".join(f"{name}: {v}" for name, vs in found.items() for v in vs)


@pytest.fixture(scope="module")
def versions_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A league whose bot ``greedy`` changed (v-one, then v-two), a crash fault recorded under a game's slot key
    (as the pool records it: no version tag), and a crash in a game that was never stored."""
    folder = tmp_path_factory.mktemp("versions") / "run"
    store = round_robin_store(folder, ["greedy", "random", "random2"], deals=2, pool=1)
    store.use_versions({"greedy": "v-one", "random": "r1", "random2": "r2"})
    store.use_versions({"greedy": "v-two", "random": "r1", "random2": "r2"})
    new = [GameId(("greedy", "random"), d, r) for d in range(2) for r in range(2)]
    kinds = lambda g: ["greedy" if s == "greedy" else "random" for s in g.seats]  # noqa: E731
    stored = store.add_games(
        [PlayedGame(g, f"d{g.deal}", play(g.seats, f"v2/{g.deal}/{g.rotation}", kinds(g)), 0.01) for g in new]
    )
    assert stored[0].ref.startswith(new[0].key + "~")  # the stored key carries the version tag
    store.add_fault("greedy", "crash", "process exited with status 1", new[0].key)
    store.add_fault("greedy", "crash", "process exited with status 9", "greedy+random/7/0")
    store.close()
    data = write_report(folder, folder / "report.html", ReportOptions(bootstrap=20))
    return folder, data


def test_a_crash_fault_opens_its_stored_game_and_an_unstored_one_opens_nothing(
    browser: Browser, versions_run: tuple[Path, dict[str, Any]]
) -> None:
    folder, data = versions_run
    faults = [f for f in data["per_bot"]["greedy"]["faults"] if f["kind"] == "crash"]
    assert len(faults) == 2
    stored, lost = faults
    assert stored["game"] in data["files"] and stored["game"].startswith("greedy+random/0/0~")
    assert lost["game"] is None and "greedy+random/7/0: not stored" in lost["detail"]
    page, watch = open_page(browser, folder / "report.html")
    page.select_option("#bot-select", "greedy")
    rows = page.locator("table.faults tbody tr", has_text="crash")
    assert rows.count() == 2
    rows.nth(0).locator("a.fault-link").click()
    assert page.locator("#viewer-body .viewer-head b").inner_text() == stored["game"]
    assert page.locator("#v-where").inner_text().startswith("round 1/")
    assert rows.nth(1).locator("a").count() == 0  # nothing to open: no link to a record that does not exist
    # every fault the page lists names a stored game, or none
    for bot in data["per_bot"].values():
        assert all(f["game"] is None or f["game"] in data["files"] for f in bot["faults"])
    watch.check()
    page.close()


def test_an_older_version_is_labelled_and_the_bot_shows_its_elo_over_its_versions(
    browser: Browser, versions_run: tuple[Path, dict[str, Any]]
) -> None:
    folder, data = versions_run
    assert data["labels"] == {"greedy@v-one": "greedy (v1, older)"}
    page, watch = open_page(browser, folder / "report.html")
    old = page.locator('#leaderboard-table tr[data-bot="greedy@v-one"] [data-col="name"]')
    assert old.inner_text() == "greedy (v1, older)"
    assert page.locator('#leaderboard-table tr[data-bot="greedy"] [data-col="name"]').inner_text() == "greedy"
    assert "greedy (v1, older)" in page.locator("#h2h-grid th.row-label").all_inner_texts()
    assert "greedy (v1, older)" in page.locator("#bot-select option").all_inner_texts()
    mine = [v for v in data["versions"] if v["bot"] == "greedy"]
    for shown in ("greedy", "greedy@v-one"):  # the current version's section and the old one's list the same
        page.select_option("#bot-select", shown)
        rows = page.locator("#versions tbody tr")
        assert rows.count() == 2
        for k, v in enumerate(mine):
            assert rows.nth(k).get_attribute("data-version") == v["version"]
            assert rows.nth(k).locator('[data-col="elo"]').inner_text() == f"{v['elo']:.1f}"
        assert rows.nth(1).locator("td").first.inner_text() == "v2 (current)"
    page.select_option("#bot-select", "random")
    assert page.locator("#versions").count() == 0  # one version: no list
    watch.check()
    page.close()


def test_the_viewer_heading_shows_the_totals_as_of_the_step_shown(browser: Browser, run: Path) -> None:
    page, watch = open_page(browser, run / "report.html")
    page.locator("#games-table button.open").first.click()
    key = page.locator("#viewer-body .viewer-head b").inner_text()
    record = json.loads((run / "games" / page.evaluate(f"window.skyjoReport.data.files[{key!r}]")).read_text())
    totals = page.locator("#v-head-totals")
    zeros = ", ".join("0" for _ in record["players"])
    assert totals.inner_text() == f"totals {zeros}"  # not the final totals at step 0
    page.keyboard.press("ArrowDown")  # round 2, before its first action
    after_one = record["rounds"][0]["result"]["scores"]
    assert totals.inner_text() == f"totals after round 1: {', '.join(map(str, after_one))}"
    page.keyboard.press("End")
    assert totals.inner_text() == f"final totals {', '.join(map(str, record['result']['totals']))}"
    watch.check()
    page.close()


@pytest.mark.parametrize("which", ["tournament", "mixed"])
def test_without_javascript_no_dead_controls_and_the_crosstable_is_a_plain_table(
    browser: Browser, run: Path, mixed_run: Path, which: str
) -> None:
    folder = {"tournament": run, "mixed": mixed_run}[which]
    data = collect(folder, ReportOptions(bootstrap=0))
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto((folder / "report.html").as_uri())
    controls = page.locator("button, input, select, textarea, [onclick]")
    assert [c.evaluate("e => e.outerHTML.slice(0, 80)") for c in controls.all() if c.is_visible()] == []
    for section in ("history", "bots", "games", "viewer"):
        assert not page.locator(f"#{section}").is_visible()
    for href in page.locator("nav a").evaluate_all("e => e.filter(a => a.offsetParent).map(a => a.hash)"):
        assert page.locator(href).is_visible(), href  # every link the reader sees leads somewhere shown
    assert "Click a heading to sort" not in page.locator("#leaderboard").inner_text()
    cells = page.locator("#h2h-grid table.h2h td.cell")
    expected = {
        (a, b): data["h2h"][i][j]
        for i, a in enumerate(data["bots"])
        for j, b in enumerate(data["bots"])
        if data["h2h"][i][j] is not None
    }
    assert cells.count() == len(expected) > 0
    for cell in cells.all():
        games, won, drawn = expected[(cell.get_attribute("data-row"), cell.get_attribute("data-col"))][:3]
        points = won + drawn / 2
        assert cell.locator(".sc").inner_text() == f"{points:g}/{games}"
        assert cell.locator(".pct").inner_text() == f"{int(100 * points / games + 0.5)}%"
    context.close()
    # with scripts on, the same sections are there and the crosstable is drawn anew, in colour
    page, watch = open_page(browser, folder / "report.html")
    for section in ("history", "bots", "games", "viewer"):
        assert page.locator(f"#{section}").is_visible()
    assert page.locator("#h2h-grid table.h2h.static").count() == 0
    assert page.locator("#h2h-grid td.cell").count() == len(expected)
    watch.check()
    page.close()


def test_every_heatmap_shade_keeps_its_text_at_4_5_to_1(browser: Browser, run: Path) -> None:
    """Every score from 0/20 to 20/20, significant and not, drawn in the page's own heatmap: text contrast >= 4.5."""
    page, watch = open_page(browser, run / "report.html")
    worst = page.evaluate(
        """() => {
          const r = window.skyjoReport, n = r.data.bots.length, seen = [];
          const rgb = (t) => t.slice(t.indexOf("(") + 1, t.indexOf(")")).split(",").slice(0, 3).map(Number);
          const lin = (v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
          const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
          for (const p of [0.001, 0.5]) for (let won = 0; won <= 20; won++) {
            for (let i = 0; i < n; i++) {
              for (let j = 0; j < n; j++) if (i !== j) r.data.h2h[i][j] = [20, won, 0, 20 - won, p];
            }
            r.renderHeadToHead();
            const c = document.querySelector("#h2h-grid td.cell"), s = getComputedStyle(c);
            const [a, b] = [lum(rgb(s.backgroundColor)), lum(rgb(s.color))].sort((x, y) => y - x);
            seen.push([(a + 0.05) / (b + 0.05), won, p, s.backgroundColor]);
          }
          return seen.sort((x, y) => x[0] - y[0])[0];
        }"""
    )
    assert worst[0] >= 4.5, worst
    watch.check()
    page.close()
