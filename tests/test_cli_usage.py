"""Usage errors are one line in our words, and nothing is hard-wrapped at 80 columns off a terminal (issue 22)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from skyjo_ref.cli.app import app
from test_play import Driver, scripted_answers
from typer.testing import CliRunner


def _run(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """The real command in a pipe (not a terminal), at the 80 columns Rich assumes there."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TTY_COMPATIBLE", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**environ, **env},
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("match", "greedy", "random", "--gmaes", "3"), "no such option --gmaes (did you mean --games?)"),
        (("match", "greedy", "random", "--games", "0"), "--games 0: expected a whole number of at least 1"),
        (("match", "greedy", "random", "-j", "0"), "--concurrency 0: expected a whole number of at least 1"),
        (("match", "greedy", "random", "-j", "many"), "--concurrency many: expected a whole number"),
        (("gate", "greedy", "random", "-j", "300"), "--concurrency 300: expected a whole number of at most 256"),
        (("merge", "OUT"), "missing STORE...; expected skyjo-ref merge OUT STORE... [OPTIONS]"),
    ],
)
def test_a_usage_error_is_one_line_in_our_words_with_exit_2(args: tuple[str, ...], message: str) -> None:
    done = _run(*args)
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {message}" + done.stderr.partition(message)[2].rstrip("\n")]
    assert "╭" not in done.stderr and "Usage:" not in done.stderr and "Input should" not in done.stderr


def test_typer_s_runner_gets_the_same_one_line_usage_error() -> None:
    result = CliRunner().invoke(app, ["match", "greedy", "random", "--games", "0"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: --games 0: expected a whole number of at least 1"


def test_long_lines_are_not_wrapped_at_80_columns_off_a_terminal(tmp_path: Path) -> None:
    folder = tmp_path / ("a-long-folder-name-" * 5) / "out"
    (tmp_path / "league.yaml").write_text(
        f"name: t\ndeals: 1\nrules: {{preset: official, end_score: 30}}\noutput: {folder}\n"
        "bots:\n  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n",
        encoding="utf-8",
    )
    done = _run("tournament", "league.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(a.endswith("results in:") and b == str(folder) for a, b in itertools.pairwise(lines)), done.stderr
    missing = _run("tournament", str(folder / "league.yaml"))
    assert missing.returncode == 2
    assert len(missing.stderr.splitlines()) == 1 and str(folder) in missing.stderr, missing.stderr


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal-100-columns"])
def test_play_s_closing_replay_command_is_one_pasteable_line(tmp_path: Path, terminal: bool) -> None:
    records = tmp_path / ("records-in-a-folder-with-a-long-name-" * 3)
    env = {"COLUMNS": "100", "TTY_COMPATIBLE": "1"} if terminal else {"COLUMNS": "", "TTY_COMPATIBLE": "0"}
    driver = Driver("greedy", "--seed", "7", "--option", "end_score=1", "--records", str(records), env_over=env)
    for line in scripted_answers(driver):
        driver.answer(line)
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\nstdout:\n{out[-3000:]}\nstderr:\n{err}"
    record = records / "game-00001.json"
    lines = out.splitlines()
    assert f"skyjo-ref replay {record}" in lines
    assert lines[lines.index(f"skyjo-ref replay {record}") - 1] == "Game record saved; replay it with:"


def test_play_s_closing_lines_fit_80_columns_and_the_record_is_relative_when_shorter(tmp_path: Path) -> None:
    """Issue 30: at 80 columns the replay command was wrapped; it is now a line of its own, the record's path
    relative to the current folder when that is shorter."""
    env = {"COLUMNS": "80", "TTY_COMPATIBLE": "1"}
    driver = Driver(
        "greedy", "--seed", "7", "--option", "end_score=1", "--records", str(tmp_path / "games"), env_over=env,
        cwd=tmp_path,
    )  # fmt: skip
    for line in scripted_answers(driver):
        driver.answer(line)
    code, out, err = driver.finish()
    assert code == 0, f"exit {code}\nstdout:\n{out[-3000:]}\nstderr:\n{err}"
    tail = out.splitlines()[-3:]
    assert tail[-2:] == ["Game record saved; replay it with:", "skyjo-ref replay games/game-00001.json"], tail
    assert all(len(line) <= 80 for line in tail), tail


def test_the_root_lists_every_command_with_its_own_help_line() -> None:
    """The root's table (what `skyjo-ref --help` shows without importing the commands) equals what the command
    modules register: every command, and each one's own first help line."""
    import importlib

    import typer
    from skyjo_ref.cli.app import COMMANDS, load_command

    registered: set[str] = set()
    for module in {module for module, _ in COMMANDS.values()}:
        own = typer.Typer()
        importlib.import_module(f"skyjo_ref.cli.{module}").register(own)
        registered |= set(typer.main.get_group(own).commands)
    assert registered == set(COMMANDS)
    for name, (_, line) in COMMANDS.items():
        command = load_command(name)
        assert (command.help or "").split("\n\n")[0].replace("\n", " ").strip() == line, name


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_the_roots_help_and_version_import_no_command(argv: list[str]) -> None:
    """`skyjo-ref --help` and `--version` print from the root alone: no gRPC, no referee, no command module."""
    probe = (
        "import sys\n"
        "from skyjo_ref.cli.entry import main\n"
        f"sys.argv = ['skyjo-ref', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in sys.modules if m == 'grpc' or m.startswith(('skyjo_ref.server', 'skyjo_ref.cli.'))]\n"
        "print('LOADED', sorted(m for m in loaded if m not in ('skyjo_ref.cli.app', 'skyjo_ref.cli.entry', "
        "'skyjo_ref.cli.errors')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "LOADED []", done.stdout[-2000:]
