"""The options several commands share are defined once (cli/options.py): same flag, help, metavar and message."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from skyjo_ref.cli import errors
from skyjo_ref.cli.app import app, load_command
from test_tournament_run import write_config
from typer.testing import CliRunner

#: Each shared option and the commands that take it.
SHARED = {
    "--rules": ("gate", "match", "play"),
    "--option": ("gate", "match", "play"),
    "--decision-ms": ("gate", "match"),
    "--bank-ms": ("gate", "match"),
    "--max-strikes": ("gate", "match"),
    "--grace-ms": ("gate", "match"),
    "--progress-every": ("gate", "tournament"),
    "--progress-seconds": ("gate", "tournament"),
    "--executor": ("gate", "match", "tournament"),
    "--in-process": ("gate", "match"),
}


def _option(command: str, flag: str) -> typer.core.TyperOption:
    found = [p for p in load_command(command).params if isinstance(p, typer.core.TyperOption) and flag in p.opts]
    assert len(found) == 1, f"{command} has no {flag}"
    return found[0]


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_a_shared_option_reads_the_same_in_every_command(flag: str) -> None:
    options = [_option(command, flag) for command in SHARED[flag]]
    first = options[0]
    assert first.help
    for option in options[1:]:
        assert (option.opts, option.help, option.metavar) == (first.opts, first.help, first.metavar)


def _refusal(tmp_path: Path, *args: str) -> str:
    """The one-line message a command refuses ``args`` with (before any game)."""
    result = CliRunner().invoke(app, list(args), catch_exceptions=True)
    assert isinstance(result.exception, errors.UserError), (result.exit_code, result.output, result.exception)
    assert not list(tmp_path.glob("runs*"))
    return str(result.exception)


def test_gate_match_and_tournament_refuse_a_bad_executor_with_the_same_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n", deals=1)
    messages = {
        _refusal(tmp_path, "gate", "greedy", "random", "--executor", "ftp://x"),
        _refusal(tmp_path, "match", "greedy", "random", "--executor", "ftp://x"),
        _refusal(tmp_path, "tournament", "league.yaml", "--executor", "ftp://x"),
    }
    assert len(messages) == 1 and next(iter(messages)).startswith("--executor: "), messages


def test_gate_match_and_play_refuse_bad_rules_and_clocks_with_the_same_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    bad_option = {_refusal(tmp_path, cmd, "greedy", "random", "-o", "end_score") for cmd in ("gate", "match", "play")}
    assert bad_option == {"--option 'end_score': expected key=value, e.g. --option column_clear=false"}
    bad_clock = {_refusal(tmp_path, cmd, "greedy", "random", "--decision-ms", "-5") for cmd in ("gate", "match")}
    assert len(bad_clock) == 1 and next(iter(bad_clock)).startswith("--decision-ms: "), bad_clock


def test_gate_refuses_a_markdown_folder_with_the_same_message_as_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, "  - {name: a, builtin: greedy}\n  - {name: b, builtin: random}\n", deals=1)
    (tmp_path / "summary").mkdir()
    gate = _refusal(tmp_path, "gate", "greedy", "random", "--markdown", "summary")
    league = _refusal(tmp_path, "tournament", "league.yaml", "--markdown", "summary")
    assert gate == league == "--markdown summary: is a folder; expected a file name (or - for stdout)"


def test_match_and_play_refuse_a_malformed_referee_address_with_the_same_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ("greedy", "random", "--referee", "no port here", "--control-token", "t")
    messages = {_refusal(tmp_path, cmd, *args) for cmd in ("match", "play")}
    assert len(messages) == 1 and next(iter(messages)).startswith("--referee 'no port here': expected HOST:PORT"), (
        messages
    )


def test_match_and_play_refuse_an_uncreatable_records_folder_with_the_same_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    messages = {_refusal(tmp_path, cmd, "greedy", "random", "--records", "file/sub") for cmd in ("match", "play")}
    assert messages == {"--records file/sub: cannot create the folder: Not a directory"}, messages
