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
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, Route, sync_playwright
from report_stores import round_robin_store
from skyjo_bot import Action, Bot, View
from skyjo_bot.types import TimeControl
from skyjo_ref.bots import make_builtin
from skyjo_ref.match import GameSetup, InProcessSeat, play_game
from skyjo_ref.records import save
from skyjo_ref.report import ReportOptions, collect, render, write_report
from skyjo_ref.tournament import sprt
from skyjo_ref.tournament.schedule import GameId
from skyjo_ref.tournament.store import Store

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "out" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


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
    assert len((page.locator("#gate polyline.llr").get_attribute("points") or "").split()) == len(history)
    assert page.locator("#gate line.bound").count() == 2
    assert page.locator("#gate rect.penta").count() == 5
    facts = page.locator("#gate-facts").inner_text()
    assert "3.050 after 80 games; Wald's bounds [-2.940, 2.940]" in facts
    # what an older gate did not store is computed with the gate's own functions, as the command line prints it
    o0, o1 = sprt.overshoot([v for _, v in history])
    assert f"stop bounds\t[{-2.94 + o0:.3f}, {2.94 - o1:.3f}] (Wald's, moved in by the overshoot correction" in facts
    est = sprt.estimate([1, 4, 10, 15, 10])
    assert f"normalized Elo\t{est.nelo:.1f} (95%: {est.nelo - est.nelo_half:.1f} – {est.nelo + est.nelo_half:.1f})" in facts
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


def test_forty_bots_heatmap_scrolls_and_stays_readable(browser: Browser, tmp_path: Path) -> None:
    bots = [f"{'greedy' if i % 3 == 0 else 'random'}-{i:02d}{'-long-name' * (i % 4)}" for i in range(40)]
    round_robin_store(tmp_path / "forty", bots, deals=1, pool=1).close()
    write_report(tmp_path / "forty", tmp_path / "forty.html", ReportOptions(bootstrap=0))
    page, watch = open_page(browser, tmp_path / "forty.html", width=1100)
    grid = page.locator("#h2h-grid")
    assert page.locator("#h2h-grid td.cell").count() == 40 * 39
    box = grid.bounding_box()
    assert box is not None and box["width"] <= 1100  # the heatmap scrolls inside its box, not the page
    labels = page.locator("#h2h-grid th.row-label")
    sizes = labels.evaluate_all("e => e.map(x => parseFloat(getComputedStyle(x).fontSize))")
    assert min(sizes) >= 10
    tops = [b["y"] for b in (labels.nth(i).bounding_box() for i in range(40)) if b is not None]
    assert all(b - a >= 12 for a, b in itertools.pairwise(tops))  # rows do not overlap
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
