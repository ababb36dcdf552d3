"""Every config error is reported before anything runs: exit 2, the file, the key path, what is expected.

Each case runs the CLI's entry point (``skyjo_ref.cli.app.main``, as the
console script does) in this process, to stay fast; a few also run as a
real subprocess (``python -m skyjo_ref tournament FILE``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from skyjo_ref.cli.app import main
from skyjo_ref.tournament.config import load_config

GOOD_BOTS = """\
bots:
  - name: g
    builtin: greedy
  - name: r
    builtin: random
"""

# (case id, config text, fragments the one-line message must hold)
CASES: list[tuple[str, str, list[str]]] = [
    ("invalid_yaml", "name: x\nbots:\n  - name: g\n    builtin: greedy\n   - name: r\n", [":5:", "not valid YAML"]),
    ("unknown_top_key", "concurency: 2\n" + GOOD_BOTS, [":1:", "concurency", "did you mean 'concurrency'"]),
    (
        "unknown_bot_key",
        "bots:\n  - name: g\n    builtin: greedy\n  - name: r\n    buitlin: random\n",
        [":5:", "bots[1].buitlin", "did you mean 'builtin'"],
    ),
    ("missing_bots", "name: x\ndeals: 2\n", ["missing key 'bots'"]),
    ("empty_file", "", ["empty", "bots"]),
    (
        "duplicate_name",
        "bots:\n  - name: g\n    builtin: greedy\n  - name: g\n    builtin: random\n",
        [":4:", "bots[1].name", "duplicate bot name 'g'"],
    ),
    ("too_few_bots", "players_per_game: 3\n" + GOOD_BOTS, [":1:", "players_per_game", "only 2 bots"]),
    ("players_out_of_range", "players_per_game: 9\n" + GOOD_BOTS, ["players_per_game", "from 2 to 8", "9"]),
    (
        "unknown_seating",
        "seating: balance\n" + GOOD_BOTS,
        [":1:", "seating", "'balance'", "expected one of rotations, balanced", "2 at 2 players for balanced"],
    ),
    ("bad_deals", "deals: 0\n" + GOOD_BOTS, [":1:", "deals", "integer from 1"]),
    ("bad_concurrency", "concurrency: many\n" + GOOD_BOTS, ["concurrency", "expected an integer"]),
    ("bad_connect_timeout", "connect_timeout_s: 0\n" + GOOD_BOTS, ["connect_timeout_s", "seconds"]),
    ("bad_seed", "seed: [1, 2]\n" + GOOD_BOTS, ["seed", "an integer or a non-empty string"]),
    ("unknown_preset", "rules: {preset: klingon}\n" + GOOD_BOTS, ["rules.preset", "official"]),
    ("bad_rules_value", "rules: {finisher_penalty: triple}\n" + GOOD_BOTS, ["rules.finisher_penalty", "plus_10"]),
    ("unknown_rules_option", "rules: {colum_clear: false}\n" + GOOD_BOTS, ["rules.colum_clear", "column_clear"]),
    (
        "bad_time_control",
        "time_control: {decision_ms: -5}\n" + GOOD_BOTS,
        ["time_control.decision_ms", "integer from 0"],
    ),
    ("unknown_time_key", "time_control: {decision: 5}\n" + GOOD_BOTS, ["time_control.decision", "decision_ms"]),
    ("unknown_anchor", "rating: {anchor: greedyy}\n" + GOOD_BOTS, ["rating.anchor", "greedyy", "bot's name"]),
    ("bad_bootstrap", "rating: {bootstrap: 5}\n" + GOOD_BOTS, ["rating.bootstrap", "at least 20"]),
    ("bad_resample", "rating: {resample: game}\n" + GOOD_BOTS, ["rating.resample", "expected one of deal, block"]),
    (
        "block_resample_without_secret",
        "rating: {resample: block}\n" + GOOD_BOTS,
        ["rating.resample", "same deck for a deal", "expected 'deal'"],
    ),
    ("bots_not_list", "bots: {name: g}\n", ["bots", "non-empty list"]),
    ("bot_without_name", "bots:\n  - builtin: greedy\n  - name: r\n    builtin: random\n", ["bots[0]", "'name'"]),
    (
        "bad_bot_name",
        "bots:\n  - name: my bot\n    builtin: greedy\n  - name: r\n    builtin: random\n",
        ["bots[0].name", "letters, digits"],
    ),
    (
        "two_kinds",
        "bots:\n  - name: g\n    builtin: greedy\n    command: ls\n  - name: r\n    builtin: random\n",
        ["bots[0]", "builtin and command", "exactly one of"],
    ),
    ("no_kind", "bots:\n  - name: g\n  - name: r\n    builtin: random\n", ["bots[0]", "has none", "exactly one of"]),
    (
        "unknown_builtin",
        "bots:\n  - name: g\n    builtin: grready\n  - name: r\n    builtin: random\n",
        [":3:", "bots[0].builtin", "greedy, random"],
    ),
    (
        "missing_python_file",
        "bots:\n  - name: g\n    python: nowhere/bot.py\n  - name: r\n    builtin: random\n",
        ["bots[0].python", "nowhere/bot.py", "does not exist"],
    ),
    (
        "missing_module",
        "bots:\n  - name: g\n    python: no_such_module_xyz:Bot\n  - name: r\n    builtin: random\n",
        ["bots[0].python", "no_such_module_xyz", "cannot be found"],
    ),
    (
        "missing_command",
        "bots:\n  - name: g\n    command: pyhton3-nope bot.py\n  - name: r\n    builtin: random\n",
        ["bots[0].command", "pyhton3-nope", "PATH"],
    ),
    (
        "missing_cwd",
        "bots:\n  - name: g\n    command: [ls]\n    cwd: no/such/dir\n  - name: r\n    builtin: random\n",
        ["bots[0].cwd", "does not exist"],
    ),
    (
        "bad_env",
        "bots:\n  - name: g\n    command: [ls]\n    env: {SEED: [1]}\n  - name: r\n    builtin: random\n",
        ["bots[0].env.SEED", "a string or a number"],
    ),
    (
        "in_process_not_python",
        "bots:\n  - name: g\n    builtin: greedy\n    in_process: true\n  - name: r\n    builtin: random\n",
        [":4:", "bots[0].in_process", "python bots only"],
    ),
    (
        "in_process_not_bool",
        "bots:\n  - name: g\n    builtin: greedy\n    in_process: yes please\n  - name: r\n    builtin: random\n",
        ["bots[0].in_process", "true or false"],
    ),
    (
        "remote_without_address",
        "bots:\n  - name: g\n    remote: {token: abcdefghij0123456789}\n  - name: r\n    builtin: random\n",
        ["bots[0].remote", "referee.listen"],
    ),
    (
        "remote_short_token",
        "referee: {listen: '127.0.0.1:50999'}\nbots:\n  - name: g\n    remote: {token: dave-7f3a9c1e}\n"
        "  - name: r\n    builtin: random\n",
        [":4:", "bots[0].remote.token", "13 characters is too short", "at least 16", "secrets.token_urlsafe(24)"],
    ),
    (
        "duplicate_yaml_key",
        "deals: 2\ndeals: 3\n" + GOOD_BOTS,
        [":2:", "deals", "duplicate key"],
    ),
    ("bad_referee_address", "referee: {address: nowhere}\n" + GOOD_BOTS, ["referee.address", "host:port"]),
]


def run_main(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cwd: Path, *args: str
) -> tuple[int, str]:
    """The console script's entry point, in-process: its exit code and stderr."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(sys, "argv", ["skyjo-ref", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "skyjo_ref", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(("text", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_config_error_names_file_key_and_expectation(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    fragments: list[str],
) -> None:
    config = tmp_path / "league.yaml"
    config.write_text(text, encoding="utf-8")
    code, stderr = run_main(capsys, monkeypatch, tmp_path, "tournament", "league.yaml")
    message = " ".join(stderr.split())
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert message.startswith("error: league.yaml"), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert not (tmp_path / "runs").exists()  # nothing ran, nothing was written


@pytest.mark.parametrize("case", ["unknown_top_key", "invalid_yaml", "missing_command"])
def test_config_errors_from_a_real_subprocess(tmp_path: Path, case: str) -> None:
    text, fragments = next(c[1:] for c in CASES if c[0] == case)
    (tmp_path / "league.yaml").write_text(text, encoding="utf-8")
    result = run_cli("tournament", "league.yaml", cwd=tmp_path)
    message = " ".join(result.stderr.split())
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert message.startswith("error: league.yaml") and all(f in message for f in fragments), message


def test_missing_config_file(tmp_path: Path) -> None:
    result = run_cli("tournament", "nope.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "nope.yaml" in result.stderr and "no such file" in result.stderr


def test_a_good_config_resolves_paths_next_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text("class Mine:  # a bot\n    pass\n", encoding="utf-8")
    config = tmp_path / "league.yaml"
    config.write_text(
        textwrap.dedent(
            """\
            name: class league
            rules: {preset: french, end_score: 50}
            players_per_game: 3
            deals: 4
            seed: spring
            time_control: {decision_ms: 500}
            rating: {anchor: g, elo: 1000}
            bots:
              - {name: g, builtin: greedy}
              - {name: r, builtin: random}
              - {name: mine, python: "bots/mine.py:Mine", env: {LEVEL: 3}}
              - {name: cmd, command: "ls -l", cwd: bots}
            """
        ),
        encoding="utf-8",
    )
    cfg = load_config(config)
    assert cfg.name == "class league"
    assert cfg.rules.end_score == 50 and cfg.rules.finisher_penalty.value == "plus_10"
    assert cfg.time_control.decision_ms == 500 and cfg.time_control.max_strikes == 3
    assert cfg.output == tmp_path.resolve() / "runs" / "class_league"
    mine = cfg.bot("mine")
    assert mine.python == f"{(tmp_path / 'bots' / 'mine.py').resolve()}:Mine" and mine.env == {"LEVEL": "3"}
    assert cfg.bot("cmd").command == ("ls", "-l") and cfg.bot("cmd").cwd == tmp_path.resolve() / "bots"
    assert cfg.rating.anchor == "g" and cfg.rating.elo == 1000 and cfg.rating.interval_seed == "spring"


def test_a_bot_file_that_does_not_compile_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("x = = 1\n", encoding="utf-8")
    config = tmp_path / "t.yaml"
    config.write_text(GOOD_BOTS + "  - name: b\n    python: broken.py\n", encoding="utf-8")
    result = run_cli("tournament", str(config), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert "bots[2].python" in message and "broken.py:1: SyntaxError: invalid syntax" in message


def test_a_class_the_bot_file_does_not_define_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text(
        "from skyjo_bot import Bot\n\n\nclass Mine(Bot):\n"
        "    def decide(self, view):\n        return view.legal_actions[0]\n",
        encoding="utf-8",
    )
    config = tmp_path / "t.yaml"
    config.write_text(GOOD_BOTS + "  - name: b\n    python: one.py:NoSuchClass\n", encoding="utf-8")
    result = run_cli("tournament", str(config), cwd=tmp_path)
    message = " ".join(result.stderr.split())
    assert result.returncode == 2, result.stderr
    assert "bots[2].python" in message and "defines no 'NoSuchClass' (classes defined there: Mine)" in message


TWO_BOTS = """\
from skyjo_bot import Bot


class First(Bot):
    def decide(self, view):
        return view.legal_actions[0]


class Second(First):
    pass
"""


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("nobot.py", "no bot in {dir}/nobot.py: define a class that subclasses skyjo_bot.Bot"),
        ("two.py", "several bots in {dir}/two.py (First, Second): choose one with {dir}/two.py:First"),
        ("afolder", "afolder is a folder, not a Python bot file: expected path/bot.py"),
        ("bot.js", "bot.js is not a Python bot (a .js file): a bot in another language runs as a command"),
    ],
)
def test_a_bot_file_without_one_bot_is_refused_before_anything_runs(tmp_path: Path, where: str, message: str) -> None:
    """No bot, two bots, a folder, a file of another language: one line and exit 2 from the config check (the
    check every command shares, skyjo_ref.botcheck), never a bot process that fails later with exit 3."""
    (tmp_path / "nobot.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "two.py").write_text(TWO_BOTS, encoding="utf-8")
    (tmp_path / "afolder").mkdir()
    (tmp_path / "bot.js").write_text("console.log('hi')\n", encoding="utf-8")
    config = tmp_path / "t.yaml"
    config.write_text("deals: 1\n" + GOOD_BOTS + f"  - name: b\n    python: {where}\n", encoding="utf-8")
    for command in (("tournament", str(config), "--plain"), ("check-bot", str(config), "--bot", "b")):
        result = run_cli(*command, cwd=tmp_path)
        assert result.returncode == 2, (command, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "bots[2].python: " in result.stderr, result.stderr
        assert message.format(dir=tmp_path) in result.stderr, result.stderr
        assert "does not exist" not in result.stderr and "Traceback" not in result.stderr
