"""Each command imports what its work uses: a command's --help loads neither gRPC nor the referee, the bots' checks,
the results store (SQLite), its tables and statistics, the executors, the report's templates or Dask; `ratings`
and `report` read a store without gRPC; a local tournament without Dask and without the report's templates. What
is loaded is read from sys.modules as the command exits (a fresh interpreter each time);
benchmarks/bench_cli_start.py measures what it costs (docs/performance.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from skyjo_ref.cli.app import COMMANDS

#: Runs skyjo-ref with the given arguments, then writes the names in sys.modules as it exits.
LOADED = textwrap.dedent(
    """\
    import atexit, json, sys
    out = sys.argv[1]
    sys.argv = ["skyjo-ref", *sys.argv[2:]]
    atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
    from skyjo_ref.cli.entry import main
    main()
    """
)

#: What no command's --help needs: gRPC and the referee, the run's machinery, the results store (SQLite) and
#: what reads it (the tables, the statistics, the incidents), the executors, the live displays, the report's
#: templates, Dask. The option types and the defaults a help shows live in light modules (cli/options.py,
#: cli/markdown.py, cli/failon.py, skyjo_ref/gate/__init__.py); the library loads inside the command.
NOT_FOR_HELP = (
    "grpc",
    "google.protobuf",
    "skyjo_ref.server.server",
    "skyjo_ref.server.client",
    "skyjo_ref.checkbot",
    "skyjo_ref.execution.room",
    "skyjo_ref.execution.pool",
    "skyjo_ref.tournament.runner",
    "skyjo_ref.tournament.config",
    "skyjo_ref.gate.run",
    "skyjo_ref.gate.spec",
    "skyjo_ref.execution.executor",
    "skyjo_ref.tournament.store",
    "skyjo_ref.tournament.tables",
    "skyjo_ref.tournament.incidents",
    "skyjo_ref.tournament.versions",
    "skyjo_ref.stats",
    "sqlite3",
    "rich.live",
    "rich.progress",
    "jinja2",
    "dask",
    "distributed",
)

LEAGUE = textwrap.dedent(
    """\
    name: imports
    rules: {preset: official, end_score: 30}
    players_per_game: 2
    deals: 2
    seed: 3
    rating: {bootstrap: 0}
    output: out
    bots:
      - {name: greedy, builtin: greedy}
      - {name: random, builtin: random}
    """
)


def loaded(folder: Path, *args: str) -> set[str]:
    """The modules loaded by ``skyjo-ref ARGS`` (run in ``folder``), which must exit 0."""
    out = folder / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", LOADED, str(out), *args], cwd=folder, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(out.read_text()))


def present(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (a package counts with its submodules) are among ``modules``."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_commands_help_imports_none_of_the_work(tmp_path: Path, command: str) -> None:
    modules = loaded(tmp_path, command, "--help")
    assert f"skyjo_ref.cli.{COMMANDS[command][0]}" in modules  # the command's own module, nothing heavier
    assert present(modules, NOT_FOR_HELP) == []


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """A small local tournament: its folder and what it loaded."""
    folder = tmp_path_factory.mktemp("league")
    (folder / "league.yaml").write_text(LEAGUE)
    return folder, loaded(folder, "tournament", "league.yaml", "--plain")


def test_a_local_tournament_loads_neither_dask_nor_the_report(played: tuple[Path, set[str]]) -> None:
    _, modules = played
    assert "skyjo_ref.tournament.runner" in modules  # it did play
    assert present(modules, ("dask", "distributed", "jinja2", "skyjo_ref.report")) == []


def test_ratings_and_report_read_a_store_without_grpc(played: tuple[Path, set[str]]) -> None:
    folder, _ = played
    ratings = loaded(folder, "ratings", "out")
    assert "skyjo_ref.tournament.store" in ratings
    assert present(ratings, ("grpc", "skyjo_ref.server", "skyjo_ref.checkbot", "jinja2", "dask")) == []
    report = loaded(folder, "report", "out", "--output", "page.html")
    assert "jinja2" in report and (folder / "page.html").exists()
    assert present(report, ("grpc", "skyjo_ref.server", "skyjo_ref.checkbot", "dask")) == []


def test_a_local_match_loads_neither_dask_nor_the_report(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "match", "greedy", "random", "--games", "2", "--seed", "1")
    assert "skyjo_ref.execution.match" in modules  # it did play
    assert present(modules, ("dask", "distributed", "jinja2", "skyjo_ref.report")) == []
